/*
 * fuzz/fuzz_sdf_dom.cc — soadyn's SDF layer past libsdformat (src/io/sdf_build.cc: the root, the
 * spanning tree and loops, frames, inertials, joint types, axes, limits, dynamics, the builder) on
 * models built from the input's bytes (fuzz_bytes.h) as the reader's first half hands them over
 * (io/sdf_parts.hh: SdfParts): links and joints that are libsdformat DOM objects made with its
 * setters (sdf::Link::SetInertial, sdf::Joint::SetType/SetAxis, sdf::JointAxis's limits and
 * dynamics), their poses already in the model frame, and the axis directions as libsdformat
 * resolved them (or failed to). No text is parsed: libsdformat's load (its own specification read
 * again every time, some 100 ms; fuzz_sdf, fuzz_sdf_model) is what this target leaves out, so it
 * runs thousands of times faster on the code that is soadyn's.
 *
 * Only what the first half can hand over is built: unique scoped names, finite poses within the
 * reader's distance bound, parents that are links or "world" (not in a nested model), children that
 * are links, frames on a link or the model frame. The numbers (masses, inertias, axes, limits,
 * dynamics) are anything libsdformat can read from text, infinities and NaN included. Up to 8 links
 * (some in a nested model "n::"), up to 10 joints of every type (loops, cycles, joints to the world,
 * a joint named like the floating root's weld), up to 2 frames, a static model, a canonical link;
 * loaded one of the two ways fuzz_sdf loads text, and judged by fuzz_check_load (model_check.c).
 */
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <ignition/math/Inertial.hh>
#include <ignition/math/MassMatrix3.hh>
#include <sdf/JointAxis.hh>

#include "io/sdf_parts.hh"

extern "C" {
#include "fuzz_bytes.h"
#include "model/model_bounds.h"
#include "model_check.h"
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size);

namespace {

constexpr int kMaxLinks = 8, kMaxJoints = 10, kMaxFrames = 2;

/* A number libsdformat can read from text: fuzz_number's, or now and then an infinity or NaN. */
double number(fuzz_bytes *b, double scale)
{
    switch (fuzz_u8(b) % 16) {
    case 0: return std::numeric_limits<double>::infinity();
    case 1: return -std::numeric_limits<double>::infinity();
    case 2: return std::numeric_limits<double>::quiet_NaN();
    default: return fuzz_number(b, scale);
    }
}

/* A pose as the first half resolves one: finite, its origin within SD_MAX_LENGTH of the model frame
 * (the reader refuses others before this layer). */
sd_transform pose(fuzz_bytes *b)
{
    double v[6];
    for (double &x : v) {
        x = fuzz_number(b, 2.0);
        if (!std::isfinite(x) || std::fabs(x) > SD_MAX_LENGTH) x = 0.0;
    }
    return sd_sdf::to_transform(ignition::math::Pose3d(v[0], v[1], v[2], v[3], v[4], v[5]));
}

sdf::JointAxis axis(fuzz_bytes *b, sd_sdf::AxisXyz *resolved)
{
    sdf::JointAxis a;
    const unsigned how = fuzz_u8(b);
    resolved->xyz.Set(number(b, 1.0), number(b, 1.0), number(b, 1.0));
    resolved->raw = resolved->xyz;
    if (how % 8 == 1) resolved->raw *= 1e160; /* text beyond what libsdformat's normalisation survives */
    if (how % 16 == 2) resolved->error = "fuzz: the frame of expressed_in cannot be resolved";
    if (how & 16) {
        a.SetLower(number(b, 3.0));
        a.SetUpper((how & 64) ? 1e16 : number(b, 3.0)); /* 1e16: libsdformat's "no limit" */
    }
    if (how & 32) {
        a.SetDamping(number(b, 2.0));
        a.SetFriction(number(b, 2.0));
        a.SetSpringStiffness(number(b, 2.0));
        a.SetSpringReference(number(b, 2.0));
    }
    if (how & 128) {
        a.SetEffort(number(b, 10.0));
        a.SetMaxVelocity(number(b, 10.0));
    }
    return a;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    fuzz_bytes b = {bytes, size};
    const int nlinks = fuzz_int(&b, 1, kMaxLinks), njoints = fuzz_int(&b, 0, kMaxJoints);
    const int nframes = fuzz_int(&b, 0, kMaxFrames);
    const unsigned flags = fuzz_u8(&b);

    sd_sdf::SdfParts parts;
    parts.source = "<fuzz>";
    parts.model_name = "m";
    parts.is_static = (flags & 1) != 0;
    parts.X_W_M = (flags & 2) ? pose(&b) : sd_sdf::to_transform(ignition::math::Pose3d());
    parts.canonical = (flags & 4) ? fuzz_int(&b, 0, nlinks - 1) : -1;

    /* the DOM objects the parts point at live here, for the load */
    sdf::Link links[kMaxLinks];
    sdf::Joint joints[kMaxJoints];
    for (int k = 0; k < nlinks; ++k) {
        const unsigned how = fuzz_u8(&b);
        const std::string name = std::string((how & 1) ? "n::" : "") + "l" + std::to_string(k);
        links[k].SetName(name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1));
        if (how & 2) {
            const double mass = number(&b, 5.0);
            const double ixx = number(&b, 1.0), iyy = number(&b, 1.0), izz = number(&b, 1.0);
            const double ixy = number(&b, 0.2), ixz = number(&b, 0.2), iyz = number(&b, 0.2);
            const ignition::math::MassMatrix3d M(mass, ignition::math::Vector3d(ixx, iyy, izz),
                                                 ignition::math::Vector3d(ixy, ixz, iyz));
            ignition::math::Pose3d at;
            if (how & 4) at.Set(number(&b, 1.0), number(&b, 1.0), number(&b, 1.0), number(&b, 3.0),
                                number(&b, 3.0), number(&b, 3.0));
            links[k].SetInertial(ignition::math::Inertiald(M, at));
        }
        sd_sdf::LinkInfo info;
        info.name = name;
        info.link = &links[k];
        info.X_M_L = pose(&b);
        info.line = k + 1;
        parts.links.push_back(info);
    }
    for (int j = 0; j < njoints; ++j) {
        const unsigned how = fuzz_u8(&b);
        sd_sdf::JointInfo info;
        info.joint = &joints[j];
        joints[j].SetType(static_cast<sdf::JointType>(fuzz_int(&b, 0, 9)));
        const int parent = fuzz_int(&b, -1, nlinks - 1), child = fuzz_int(&b, 0, nlinks - 1);
        const bool nested = (how & 1) && parent >= 0; /* a nested model's joint to the world is refused before */
        info.name = (how & 2) ? parts.links[static_cast<size_t>(child)].name + "_root" /* the root weld's name */
                              : std::string(nested ? "n::" : "") + "j" + std::to_string(j);
        info.parent = parent < 0 ? std::string("world") : parts.links[static_cast<size_t>(parent)].name;
        info.child = parts.links[static_cast<size_t>(child)].name;
        info.X_M_J = (how & 4) ? pose(&b) : parts.links[static_cast<size_t>(child)].X_M_L;
        for (unsigned a = 0; a < 2; ++a)
            if (how & (8u << a)) joints[j].SetAxis(a, axis(&b, &info.axis[a]));
        info.line = 100 + j;
        parts.joints.push_back(info);
    }
    for (int f = 0; f < nframes; ++f) {
        sd_sdf::FrameInfo info;
        info.name = "f" + std::to_string(f);
        const int on = fuzz_int(&b, -1, nlinks - 1);
        info.link = on < 0 ? std::string() : parts.links[static_cast<size_t>(on)].name;
        info.X_M_F = pose(&b);
        info.line = 200 + f;
        parts.frames.push_back(info);
    }

    static const struct {
        const char *name;
        sd_sdf_options options;
    } ways[] = {
        {"sdf dom (floating unless jointed to world, fixed joints merged)", {0, 0, nullptr}},
        {"sdf dom (welded to the world, fixed joints kept)", {1, 1, nullptr}},
    };
    const size_t w = (flags >> 3) & 1;
    sd_model *model = nullptr;
    sd_error err;
    err.message[0] = '\0';
    const sd_status st = sd_sdf::guarded(parts.source, &err, [&] { return sd_sdf::build_model(parts, &ways[w].options, &model, &err); });
    fuzz_check_load(ways[w].name, st, model, &err, fuzz_input_seed(bytes, size));
    sd_model_free(model);
    return 0;
}
