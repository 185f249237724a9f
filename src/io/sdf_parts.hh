/*
 * io/sdf_parts.hh — what the two halves of the SDF reader share (C++, private to the library):
 *
 *   sdf_reader.cc  text -> libsdformat's DOM -> SdfParts: every pose, parent, child, frame and axis
 *                  direction resolved by libsdformat's graphs into the top model's frame M
 *   sdf_build.cc   SdfParts -> the model: the spanning tree and loops, the root, inertials, joint
 *                  types, axes, limits and dynamics checked, the URDF reader's builder half
 *
 * The second half takes nothing from libsdformat that needs its frame graphs (the DOM objects it
 * keeps are asked only for their own values: a link's inertial, a joint's type and axes), so it runs
 * as well on DOM objects built with libsdformat's setters: fuzz/fuzz_sdf_dom.cc feeds it that way,
 * thousands of times faster than a load through libsdformat's parser.
 */
#ifndef SOADYN_IO_SDF_PARTS_HH
#define SOADYN_IO_SDF_PARTS_HH

#include <cmath>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <ignition/math/Pose3.hh>
#include <ignition/math/Vector3.hh>
#include <sdf/Joint.hh>
#include <sdf/Link.hh>

extern "C" {
#include <soadyn/sdf.h>
#include <soadyn/spatial.h>

#include "io/io_common.h"
}

namespace sd_sdf {

/* A load failed with this status and message (thrown inside, caught at the C boundary). */
struct Failure {
    sd_status status;
    std::string message;
};

/* "source:line: what" as a Failure; line 0: unknown or another file. */
[[noreturn]] void fail(const std::string &source, sd_status status, int line, const std::string &what);

inline std::string quoted(const char *kind, const std::string &name) { return std::string(kind) + " '" + name + "'"; }

sd_transform to_transform(const ignition::math::Pose3d &pose);

inline sd_transform compose(const sd_transform &a, const sd_transform &b)
{
    sd_transform out;
    sd_transform_compose(&a, &b, &out);
    return out;
}

inline sd_transform inverse(const sd_transform &a)
{
    sd_transform out;
    sd_transform_inverse(&a, &out);
    return out;
}

inline bool finite_pose(const ignition::math::Pose3d &p)
{
    const auto &q = p.Rot();
    return std::isfinite(p.Pos().X()) && std::isfinite(p.Pos().Y()) && std::isfinite(p.Pos().Z()) &&
           std::isfinite(q.W()) && std::isfinite(q.X()) && std::isfinite(q.Y()) && std::isfinite(q.Z());
}

struct LinkInfo {
    std::string name;    /* scoped: "nested::link" */
    const sdf::Link *link; /* asked for its Inertial() only */
    sd_transform X_M_L;  /* link frame in the model frame */
    int line;            /* 0: unknown or another file */
    int parent_joint = -1;
    bool reached = false;
};

/* An <axis>/<axis2> direction as libsdformat resolved it (in the joint frame), and as the text gave it. */
struct AxisXyz {
    ignition::math::Vector3d xyz;
    ignition::math::Vector3d raw; /* the text's <xyz> numbers where the element has them, else xyz */
    std::string error;            /* libsdformat's message when it could not resolve the direction */
};

struct JointInfo {
    std::string name;
    const sdf::Joint *joint; /* asked for its Type(), Axis() values and Element() only */
    std::string parent, child; /* scoped link names; parent "world" for the inertial frame */
    int parent_link = -1, child_link = -1; /* -1: world */
    sd_transform X_M_J;
    AxisXyz axis[2];         /* for each Axis(a) the joint has */
    int line;
    bool tree = false;
};

/* An explicit <frame>: kept as a frame of the body its link belongs to. */
struct FrameInfo {
    std::string name, link; /* scoped; the link it is attached to (through other frames or joints); "": the model frame */
    int link_index = -1;
    sd_transform X_M_F;
    int line;
};

/* One model as the first half read it. */
struct SdfParts {
    std::string source;     /* the file (or "<string>") messages name */
    std::string model_name;
    bool is_static = false; /* <static>: welded to the world */
    sd_transform X_W_M;     /* the model frame in the world */
    int canonical = -1;     /* index in links of the canonical link; -1: none */
    std::vector<LinkInfo> links;
    std::vector<JointInfo> joints;
    std::vector<FrameInfo> frames;
};

/* The second half: parts -> *model (the parts' build state is filled in on the way). Throws Failure and
 * std::bad_alloc; nothing else. */
sd_status build_model(SdfParts &parts, const sd_sdf_options *options, sd_model **model, sd_error *err);

/* The C boundary of both halves: run `body` (which returns a status), turning what it throws into a
 * status and a message in err (Failure: its own; out of memory; a libsdformat exception). */
template <class Body> sd_status guarded(const std::string &source, sd_error *err, Body &&body)
{
    try {
        return body();
    } catch (const Failure &f) {
        if (err != nullptr) {
            err->status = f.status;
            std::snprintf(err->message, sizeof err->message, "%s", f.message.c_str());
        }
        return f.status;
    } catch (const std::bad_alloc &) {
        return sd_io_fail(err, SD_E_MEMORY, source.c_str(), 0, "out of memory");
    } catch (const std::exception &e) {
        return sd_io_fail(err, SD_E_PARSE, source.c_str(), 0, "libsdformat: %s", e.what());
    } catch (...) {
        return sd_io_fail(err, SD_E_PARSE, source.c_str(), 0, "libsdformat failed");
    }
}

} // namespace sd_sdf

#endif /* SOADYN_IO_SDF_PARTS_HH */
