/*
 * io/sdf_build.cc — the second half of the SDF reader (io/sdf_parts.hh): the links, joints and frames
 * libsdformat resolved into the model frame M (io/sdf_reader.cc) -> the URDF reader's robot
 * (io/urdf_internal.h), whose builder half already does what SDF needs as well: tree checks,
 * fixed-joint lumping, the "world" root, the free root hinge and closure constraints.
 *
 * Frames. soadyn's body frame is its hinge frame at the neutral configuration, so the body of a
 * link C entered through joint J has J's frame (SDF places a joint's frame relative to its child
 * link, by default at the link's origin, but anywhere in general); the root's body has its link
 * frame. Every pose arrives resolved into M, and is expressed here in the body frames:
 *   joint origin  = B_P^-1 B_C          (B_X: body frame of link X in M; world: X_M_W)
 *   inertial      = B_L^-1 X_M_L X_L_I  (mass and inertia about the centre of mass, rotated by R I R^T)
 *   axis          = <axis><xyz> resolved by libsdformat in J's coordinates
 * The root: joints to "world" attach their children to the inertial frame; a model with none
 * (and not <static>) floats: its root link (the canonical link) is welded to "world" at its pose by
 * a joint named "<link>_root", which the builder's floating_base turns into the free hinge.
 *
 * Loops. The spanning tree is grown breadth-first from the root, joints in document order, along
 * parent -> child; a joint whose child is already in the tree becomes a URDF+-style loop of the
 * matching kind between J's frame on the parent link (F_A) and on the child (F_B), which coincide
 * at the file's configuration. Links the tree never reaches are refused. A loop joint's <dynamics>
 * (damping, friction, spring) and rotor inertia have no place in a closure constraint: they are
 * named in the model's one warning of what soadyn does not model.
 */
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <sdf/Element.hh>
#include <sdf/JointAxis.hh>

#include "io/sdf_parts.hh"

extern "C" {
#include "io/urdf_internal.h"
#include "model/model_bounds.h"
}

namespace sd_sdf {
namespace {

/* Relative tolerance of the inertia checks (as the URDF reader's): rounding, not physics. */
constexpr double kInertiaTol = 1e-9;

/* libsdformat reports 1e16 for an absent limit. */
constexpr double kNoLimit = 1e15;

/* Eigenvalues of a symmetric 3x3 matrix, ascending (the closed form of Smith 1961). */
void sym3_eigenvalues(const double A[9], double e[3])
{
    const double p1 = A[1] * A[1] + A[2] * A[2] + A[5] * A[5];
    const double q = (A[0] + A[4] + A[8]) / 3.0;
    if (p1 == 0.0) {
        e[0] = A[0]; e[1] = A[4]; e[2] = A[8];
    } else {
        const double p2 = (A[0] - q) * (A[0] - q) + (A[4] - q) * (A[4] - q) + (A[8] - q) * (A[8] - q) + 2.0 * p1;
        const double p = std::sqrt(p2 / 6.0);
        double B[9];
        for (int i = 0; i < 9; ++i) B[i] = (A[i] - ((i % 4) == 0 ? q : 0.0)) / p;
        const double detB = B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
                            B[2] * (B[3] * B[7] - B[4] * B[6]);
        double r = detB / 2.0;
        r = r < -1.0 ? -1.0 : (r > 1.0 ? 1.0 : r);
        const double phi = std::acos(r) / 3.0;
        e[2] = q + 2.0 * p * std::cos(phi);
        e[0] = q + 2.0 * p * std::cos(phi + 2.0 * M_PI / 3.0);
        e[1] = 3.0 * q - e[0] - e[2];
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2 - i; ++j)
            if (e[j] > e[j + 1]) std::swap(e[j], e[j + 1]);
}

/* A bound of model_bounds.h as a message gives it ("1e+30"). */
std::string bound_text(double bound)
{
    std::ostringstream s;
    s << bound;
    return s.str();
}

/* The parts of one model, built: its tree (build_tree), then the robot (to_robot). */
class Builder {
public:
    explicit Builder(SdfParts &parts)
        : links_(parts.links), joints_(parts.joints), frames_(parts.frames), X_W_M_(parts.X_W_M),
          root_(parts.canonical), source_(parts.source)
    {
    }

    void build_tree();
    void to_robot(sd_urdf_robot *robot);
    bool has_world_joint() const { return has_world_joint_; }

private:
    [[noreturn]] void fail(sd_status status, int line, const std::string &what) const
    {
        sd_sdf::fail(source_, status, line, what);
    }
    void add_inertial(const LinkInfo &info, sd_urdf_link *out) const;
    void fill_joint(const JointInfo &j, sd_urdf_joint *out) const;
    void axis_dynamics(const JointInfo &j, const sdf::JointAxis &axis, const std::string &what, sd_urdf_joint *out) const;
    double reflected_inertia(const JointInfo &j, const std::string &what) const;
    double drake_number(const JointInfo &j, const char *tag, double absent, const std::string &what) const;
    sd_transform body_frame(int link) const;
    void dropped_loop_dynamics(const JointInfo &j, const sd_urdf_joint &read, std::vector<std::string> *out) const;

    std::vector<LinkInfo> &links_;
    std::vector<JointInfo> &joints_;
    std::vector<FrameInfo> &frames_;
    sd_transform X_W_M_;
    bool has_world_joint_ = false;
    int root_;
    const std::string &source_;
};

/* The spanning tree, breadth-first from the root along parent -> child, joints in document order. */
void Builder::build_tree()
{
    std::map<std::string, int> by_name;
    for (size_t i = 0; i < links_.size(); ++i) by_name.emplace(links_[i].name, static_cast<int>(i));
    if (links_.empty()) fail(SD_E_MODEL, 0, "the model has no link");
    for (auto &j : joints_) {
        if (j.parent != "world") {
            auto it = by_name.find(j.parent);
            if (it == by_name.end()) fail(SD_E_PARSE, j.line, quoted("joint", j.name) + ": unknown parent link '" + j.parent + "'");
            j.parent_link = it->second;
        } else {
            has_world_joint_ = true;
        }
        auto it = by_name.find(j.child);
        if (it == by_name.end()) fail(SD_E_PARSE, j.line, quoted("joint", j.name) + ": unknown child link '" + j.child + "'");
        j.child_link = it->second;
        if (j.child_link == j.parent_link) fail(SD_E_PARSE, j.line, quoted("joint", j.name) + ": its parent is its child");
    }
    for (auto &f : frames_) {
        if (f.link.empty()) continue; /* attached to the model frame: resolved to the root below */
        auto it = by_name.find(f.link);
        if (it == by_name.end()) fail(SD_E_PARSE, f.line, quoted("frame", f.name) + ": unknown link '" + f.link + "'");
        f.link_index = it->second;
    }
    std::deque<int> queue; /* links; -1 is the world */
    if (has_world_joint_) {
        queue.push_back(-1);
    } else {
        /* the root: the canonical link, else the one link no joint enters */
        int root = root_;
        if (root < 0 || [&] { for (auto &j : joints_) if (j.child_link == root) return true; return false; }()) {
            root = -1;
            for (size_t i = 0; i < links_.size(); ++i) {
                bool entered = false;
                for (auto &j : joints_) entered = entered || j.child_link == static_cast<int>(i);
                if (!entered) { root = static_cast<int>(i); break; }
            }
            if (root < 0) fail(SD_E_MODEL, links_[0].line, "every link is the child of a joint: no root link");
        }
        root_ = root;
        links_[root].reached = true;
        queue.push_back(root);
    }
    while (!queue.empty()) {
        const int L = queue.front();
        queue.pop_front();
        for (size_t k = 0; k < joints_.size(); ++k) {
            JointInfo &j = joints_[k];
            if (j.parent_link != L) continue;
            if (j.parent_link == -1 && j.parent != "world") continue;
            LinkInfo &child = links_[j.child_link];
            if (child.reached) continue; /* a loop joint */
            child.reached = true;
            child.parent_joint = static_cast<int>(k);
            j.tree = true;
            queue.push_back(j.child_link);
        }
    }
    for (const auto &l : links_)
        if (!l.reached)
            fail(SD_E_MODEL, l.line,
                 quoted("link", l.name) + " is not connected to the model's root by joints leading away from it");
    for (const auto &j : joints_)
        if (!j.tree && j.parent_link >= 0 && !links_[j.parent_link].reached)
            fail(SD_E_MODEL, j.line, quoted("joint", j.name) + ": its parent link is not connected to the root");
}

/* Body frame of a link in M: its tree joint's frame, the link frame at the root; world: X_M_W. */
sd_transform Builder::body_frame(int link) const
{
    if (link < 0) return inverse(X_W_M_);
    const LinkInfo &l = links_[link];
    return l.parent_joint >= 0 ? joints_[l.parent_joint].X_M_J : l.X_M_L;
}

void Builder::add_inertial(const LinkInfo &info, sd_urdf_link *out) const
{
    const std::string what = quoted("link", info.name);
    const auto &inertial = info.link->Inertial();
    const double m = inertial.MassMatrix().Mass();
    const auto moi = inertial.MassMatrix().Moi();
    const auto &pose = inertial.Pose();
    if (!std::isfinite(m)) fail(SD_E_PARSE, info.line, what + ": its mass is not finite");
    if (m < 0.0) {
        std::ostringstream t;
        t << what << ": negative mass " << m << " kg";
        fail(SD_E_PARSE, info.line, t.str());
    }
    if (m > SD_MAX_MASS) fail(SD_E_PARSE, info.line, what + ": mass beyond 1e12 kg, the bound of physical models");
    if (!finite_pose(pose)) fail(SD_E_PARSE, info.line, what + ": its <inertial><pose> is not finite");
    double I[9], scale = 0.0;
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            I[3 * r + c] = moi(r, c);
            if (!std::isfinite(I[3 * r + c])) fail(SD_E_PARSE, info.line, what + ": its inertia is not finite");
            scale = std::max(scale, std::fabs(I[3 * r + c]));
        }
    const double largest = m * SD_MAX_LENGTH * SD_MAX_LENGTH;
    if (m == 0.0 && scale > 0.0) fail(SD_E_PARSE, info.line, what + ": zero mass with a nonzero inertia");
    if (scale > largest)
        fail(SD_E_PARSE, info.line, what + ": an inertia entry is beyond mass x (1e6 m)^2, the bound of physical models");
    double e[3];
    sym3_eigenvalues(I, e);
    if (e[0] < -kInertiaTol * scale) {
        std::ostringstream s;
        s << what << ": its inertia is not positive semi-definite (principal moments " << e[0] << ", " << e[1] << ", "
          << e[2] << ")";
        fail(SD_E_PARSE, info.line, s.str());
    }
    out->triangle_broken = e[2] > e[0] + e[1] + kInertiaTol * e[2];
    /* X_B_I = B^-1 X_M_L X_L_I; the inertia turned into body axes, R I R^T */
    const int self = static_cast<int>(&info - links_.data());
    const sd_transform X_B_I = compose(inverse(body_frame(self)), compose(info.X_M_L, to_transform(pose)));
    double T[9];
    sd_m3_mul(X_B_I.R, I, T);
    sd_m3_mul_t(T, X_B_I.R, out->inertia);
    std::memcpy(out->com, X_B_I.p, sizeof out->com);
    out->mass = m;
    out->has_inertial = 1;
}

/* An axis's <dynamics> (damping, friction, spring) and the joint's Drake rotor inertia into out. */
void Builder::axis_dynamics(const JointInfo &j, const sdf::JointAxis &axis, const std::string &what,
                           sd_urdf_joint *out) const
{
    const double damping = axis.Damping(), friction = axis.Friction();
    if (!std::isfinite(damping) || damping < 0.0 || damping > SD_MAX_DAMPING)
        fail(SD_E_PARSE, j.line,
             what + ": <dynamics><damping> must be finite, >= 0 and at most " + bound_text(SD_MAX_DAMPING));
    if (!std::isfinite(friction) || friction < 0.0 || friction > SD_MAX_EFFORT)
        fail(SD_E_PARSE, j.line,
             what + ": <dynamics><friction> must be finite, >= 0 and at most " + bound_text(SD_MAX_EFFORT));
    const double stiffness = axis.SpringStiffness(), reference = axis.SpringReference();
    if (!std::isfinite(stiffness) || stiffness < 0.0 || stiffness > SD_MAX_STIFFNESS)
        fail(SD_E_PARSE, j.line,
             what + ": <dynamics><spring_stiffness> must be finite, >= 0 and at most " + bound_text(SD_MAX_STIFFNESS));
    if (!std::isfinite(reference) || std::fabs(reference) > SD_MAX_ANGLE)
        fail(SD_E_PARSE, j.line,
             what + ": <dynamics><spring_reference> must be finite and at most " + bound_text(SD_MAX_ANGLE));
    out->damping = damping;
    out->friction = friction;
    out->stiffness = stiffness;
    out->spring_ref = stiffness > 0.0 ? reference : 0.0;
    out->armature = reflected_inertia(j, what);
}

void Builder::fill_joint(const JointInfo &j, sd_urdf_joint *out) const
{
    const std::string what = quoted("joint", j.name);
    const sdf::JointType type = j.joint->Type();
    switch (type) {
    case sdf::JointType::REVOLUTE: out->hinge = SD_HINGE_REVOLUTE; break;
    case sdf::JointType::CONTINUOUS: out->hinge = SD_HINGE_REVOLUTE; out->continuous = 1; break;
    case sdf::JointType::PRISMATIC: out->hinge = SD_HINGE_PRISMATIC; break;
    case sdf::JointType::BALL: out->hinge = SD_HINGE_SPHERICAL; break;
    case sdf::JointType::UNIVERSAL: out->hinge = SD_HINGE_UNIVERSAL; break;
    case sdf::JointType::FIXED: out->hinge = SD_HINGE_FIXED; break;
    case sdf::JointType::GEARBOX: fail(SD_E_NOT_SUPPORTED, j.line, what + ": type 'gearbox' is not offered");
    case sdf::JointType::REVOLUTE2: fail(SD_E_NOT_SUPPORTED, j.line, what + ": type 'revolute2' is not offered");
    case sdf::JointType::SCREW: fail(SD_E_NOT_SUPPORTED, j.line, what + ": type 'screw' is not offered");
    default: fail(SD_E_PARSE, j.line, what + ": unknown joint type");
    }
    const int naxes = out->hinge == SD_HINGE_UNIVERSAL ? 2 : (out->hinge == SD_HINGE_REVOLUTE ||
                                                              out->hinge == SD_HINGE_PRISMATIC ? 1 : 0);
    for (int a = 0; a < naxes; ++a) {
        const sdf::JointAxis *axis = j.joint->Axis(static_cast<unsigned>(a));
        const char *tag = a == 0 ? "<axis>" : "<axis2>";
        if (axis == nullptr) fail(SD_E_PARSE, j.line, what + ": no " + tag);
        const AxisXyz &resolved = j.axis[a];
        if (!resolved.error.empty()) fail(SD_E_PARSE, j.line, what + ": " + tag + " cannot be resolved: " + resolved.error);
        double v[3] = {resolved.xyz.X(), resolved.xyz.Y(), resolved.xyz.Z()};
        if (!std::isfinite(v[0]) || !std::isfinite(v[1]) || !std::isfinite(v[2]))
            fail(SD_E_PARSE, j.line, what + ": " + tag + " <xyz> is not finite");
        /* libsdformat normalises <xyz> itself, and a component beyond some 1e154 overflows its norm
         * into a zero vector: that is said as what it is, not as a zero axis */
        const ignition::math::Vector3d &raw = resolved.raw;
        if (std::fabs(raw.X()) > 1e150 || std::fabs(raw.Y()) > 1e150 || std::fabs(raw.Z()) > 1e150)
            fail(SD_E_PARSE, j.line, what + ": " + tag + " <xyz> has a component beyond 1e150, whose square "
                 "overflows libsdformat's normalisation: give the direction at a size near 1");
        if (!sd_io_normalize(v, 3)) fail(SD_E_PARSE, j.line, what + ": " + tag + " <xyz> has zero length");
        double *dst = a == 0 ? out->axis : out->axis2;
        for (int i = 0; i < 3; ++i) dst[i] = v[i];
        if (a > 0) continue;
        axis_dynamics(j, *axis, what, out);
        const double lo = axis->Lower(), hi = axis->Upper();
        const double bound = out->hinge == SD_HINGE_PRISMATIC ? SD_MAX_LENGTH : SD_MAX_ANGLE;
        if (std::isnan(lo) || std::isnan(hi)) fail(SD_E_PARSE, j.line, what + ": a <limit> is NaN");
        if (!out->continuous && std::fabs(lo) < kNoLimit && std::fabs(hi) < kNoLimit) {
            if (lo > hi) fail(SD_E_PARSE, j.line, what + ": <limit> lower > upper");
            if (std::fabs(lo) <= bound && std::fabs(hi) <= bound) {
                out->has_limits = 1;
                out->lower = lo;
                out->upper = hi;
            }
        }
        const double effort = axis->Effort(), velocity = axis->MaxVelocity();
        out->effort = std::isfinite(effort) && effort > 0.0 && effort <= SD_MAX_EFFORT ? effort : 0.0;
        out->velocity = std::isfinite(velocity) && velocity > 0.0 && velocity <= SD_MAX_SPEED ? velocity : 0.0;
    }
    /* A ball joint moves about no axis, but its <axis><dynamics> give the damping and friction of its
     * three speeds (as Drake reads them). They were once skipped with the axis, so a ball joint's
     * damping vanished: from the tree hinge, and from the warning of what a loop joint drops. A
     * spring there would need a rest orientation SDF does not give: refused. */
    if (out->hinge == SD_HINGE_SPHERICAL) {
        if (const sdf::JointAxis *axis = j.joint->Axis(0)) axis_dynamics(j, *axis, what, out);
        else out->armature = reflected_inertia(j, what);
        if (out->stiffness > 0.0)
            fail(SD_E_NOT_SUPPORTED, j.line, what + ": a <dynamics><spring_stiffness> on a ball joint is not offered "
                                                    "(SDF gives it no rest orientation)");
    }
}

/* A number of a Drake extension element directly under the joint (<drake:gear_ratio>); `absent` if none. */
double Builder::drake_number(const JointInfo &j, const char *tag, double absent, const std::string &what) const
{
    const sdf::ElementPtr joint = j.joint->Element();
    if (!joint) return absent;
    for (sdf::ElementPtr c = joint->GetFirstElement(); c; c = c->GetNextElement()) {
        if (c->GetName() != tag) continue;
        const std::string text = c->GetValue() ? c->GetValue()->GetAsString() : std::string();
        char *end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        while (end != nullptr && std::isspace(static_cast<unsigned char>(*end))) ++end;
        if (text.empty() || end == nullptr || *end != '\0' || !std::isfinite(v))
            fail(SD_E_PARSE, j.line, what + ": <" + tag + "> '" + text + "' is not a finite number");
        return v;
    }
    return absent;
}

/* Drake's reflected rotor inertia, drake:rotor_inertia x drake:gear_ratio^2 (as the URDF reader
 * reads it from a <transmission>), the joint's armature. */
double Builder::reflected_inertia(const JointInfo &j, const std::string &what) const
{
    const double rotor = drake_number(j, "drake:rotor_inertia", 0.0, what);
    const double ratio = drake_number(j, "drake:gear_ratio", 1.0, what);
    if (rotor < 0.0) fail(SD_E_PARSE, j.line, what + ": <drake:rotor_inertia> is negative");
    if (std::fabs(ratio) > SD_MAX_GEAR_RATIO)
        fail(SD_E_PARSE, j.line, what + ": <drake:gear_ratio> beyond 1e6, the bound of physical models");
    const double armature = rotor * ratio * ratio;
    if (armature > SD_MAX_ARMATURE)
        fail(SD_E_PARSE, j.line, what + ": reflected rotor inertia beyond " + bound_text(SD_MAX_ARMATURE) +
                                     ", the bound of physical models");
    return armature;
}

char *dup(const std::string &s)
{
    char *c = sd_io_strdup(s.c_str());
    if (c == nullptr) throw std::bad_alloc();
    return c;
}

template <class T> T *allocate(size_t n)
{
    T *p = static_cast<T *>(std::calloc(n > 0 ? n : 1, sizeof(T)));
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

/* What a loop-closing joint's <dynamics> (and Drake rotor inertia) held, which its closure constraint
 * drops: "joint 'j' (line 12: damping 0.5, spring_stiffness 3)"; nothing when it held none. */
void Builder::dropped_loop_dynamics(const JointInfo &j, const sd_urdf_joint &read, std::vector<std::string> *out) const
{
    std::ostringstream s;
    int n = 0;
    const auto item = [&](const char *what, double v) {
        if (v == 0.0) return;
        s << (n++ > 0 ? ", " : "") << what << " " << v;
    };
    item("damping", read.damping);
    item("friction", read.friction);
    item("spring_stiffness", read.stiffness);
    item("rotor inertia (armature)", read.armature);
    if (n == 0) return;
    std::string where = quoted("joint", j.name);
    if (j.line > 0) where += " (line " + std::to_string(j.line) + ": " + s.str() + ")";
    else where += " (" + s.str() + ")";
    out->push_back(where);
}

/* The URDF reader's robot: tree joints (and the root's weld to world), links, loops. The robot owns
 * what is malloc'ed here (sd_urdf_robot_clear frees it). */
void Builder::to_robot(sd_urdf_robot *robot)
{
    int ntree = 0, nloop = 0;
    for (const auto &j : joints_) (j.tree ? ntree : nloop)++;
    const bool add_root = !has_world_joint_;
    const int nframes = static_cast<int>(frames_.size());
    robot->links = allocate<sd_urdf_link>(links_.size() + frames_.size());
    robot->links_cap = static_cast<int>(links_.size()) + nframes;
    robot->joints = allocate<sd_urdf_joint>(static_cast<size_t>(ntree + (add_root ? 1 : 0) + nframes));
    robot->joints_cap = ntree + (add_root ? 1 : 0) + nframes;
    robot->loops = allocate<sd_urdf_loop>(static_cast<size_t>(nloop));
    robot->loops_cap = nloop;
    for (size_t i = 0; i < links_.size(); ++i) {
        sd_urdf_link *l = &robot->links[robot->nlinks++];
        l->name = dup(links_[i].name);
        l->line = links_[i].line;
        l->parent_joint = l->first_child = l->last_child = -1;
        add_inertial(links_[i], l);
    }
    if (add_root) {
        /* the root link welded to the world at its pose; free with floating_base */
        std::string name = links_[root_].name + "_root";
        for (int k = 2;; ++k) {
            bool taken = false;
            for (const auto &j : joints_) taken = taken || j.name == name;
            if (!taken) break;
            name = links_[root_].name + "_root" + std::to_string(k);
        }
        sd_urdf_joint *r = &robot->joints[robot->njoints++];
        r->name = dup(name);
        r->line = links_[root_].line;
        r->hinge = SD_HINGE_FIXED;
        r->parent_name = dup("world");
        r->child_name = dup(links_[root_].name);
        r->parent = r->child = r->next_sibling = -1;
        r->origin = compose(X_W_M_, links_[root_].X_M_L);
        r->axis[0] = 1.0;
    }
    std::vector<std::string> dropped; /* loop joints whose <dynamics> the closure constraint cannot carry */
    for (const auto &j : joints_) {
        if (j.tree) {
            sd_urdf_joint *o = &robot->joints[robot->njoints++];
            o->name = dup(j.name);
            o->parent_name = dup(j.parent);
            o->child_name = dup(j.child);
            o->line = j.line;
            o->parent = o->child = o->next_sibling = -1;
            o->axis[0] = 1.0;
            fill_joint(j, o);
            o->origin = compose(inverse(body_frame(j.parent_link)), j.X_M_J);
            continue;
        }
        sd_urdf_joint tmp;
        std::memset(&tmp, 0, sizeof tmp);
        tmp.axis[0] = 1.0;
        fill_joint(j, &tmp); /* the same checks and the axis */
        const std::string what = quoted("joint", j.name);
        sd_urdf_loop *lp = &robot->loops[robot->nloops];
        switch (tmp.hinge) {
        case SD_HINGE_REVOLUTE: lp->type = SD_CONSTRAINT_REVOLUTE; break;
        case SD_HINGE_PRISMATIC: lp->type = SD_CONSTRAINT_PRISMATIC; break;
        case SD_HINGE_SPHERICAL: lp->type = SD_CONSTRAINT_BALL; break;
        case SD_HINGE_FIXED: lp->type = SD_CONSTRAINT_WELD; break;
        default:
            fail(SD_E_NOT_SUPPORTED, j.line,
                 what + ": closes a loop (its child link already has a parent) as a " +
                     sd_hinge_type_name(tmp.hinge) + " joint, which has no closure constraint");
        }
        ++robot->nloops;
        dropped_loop_dynamics(j, tmp, &dropped);
        lp->name = dup(j.name);
        lp->line = j.line;
        lp->link[0] = dup(j.parent);
        lp->link[1] = dup(j.child);
        lp->side_line[0] = lp->side_line[1] = j.line;
        lp->origin[0] = compose(inverse(body_frame(j.parent_link)), j.X_M_J);
        lp->origin[1] = compose(inverse(body_frame(j.child_link)), j.X_M_J);
        std::memcpy(lp->axis, tmp.axis, sizeof lp->axis);
    }
    if (!dropped.empty()) { /* the one warning of what soadyn does not model */
        std::string w = source_ + ": SDF elements soadyn does not model, ignored: the joint dynamics of " +
                        std::to_string(dropped.size()) + " loop-closing joint" + (dropped.size() > 1 ? "s" : "") +
                        " (a closure constraint carries none): ";
        for (size_t i = 0; i < dropped.size(); ++i) w += (i > 0 ? "; " : "") + dropped[i];
        robot->warning = dup(w);
    }
    /* each <frame>: a massless link welded to its link, which the builder keeps as a frame of that
     * link's body (a 0-dof body with keep_fixed_joints); SDF names frames, links and joints in one
     * scope, so the frame's name is free for both */
    for (const auto &f : frames_) {
        const int host = f.link_index >= 0 ? f.link_index : (root_ >= 0 ? root_ : -1);
        sd_urdf_link *l = &robot->links[robot->nlinks++];
        l->name = dup(f.name);
        l->line = f.line;
        l->parent_joint = l->first_child = l->last_child = -1;
        sd_urdf_joint *o = &robot->joints[robot->njoints++];
        o->name = dup(f.name);
        o->line = f.line;
        o->hinge = SD_HINGE_FIXED;
        o->parent_name = dup(host >= 0 ? links_[host].name : std::string("world"));
        o->child_name = dup(f.name);
        o->parent = o->child = o->next_sibling = -1;
        o->axis[0] = 1.0;
        o->origin = compose(inverse(body_frame(host)), f.X_M_F);
    }
}

} // namespace

sd_status build_model(SdfParts &parts, const sd_sdf_options *options, sd_model **model, sd_error *err)
{
    sd_urdf_robot robot;
    std::memset(&robot, 0, sizeof robot);
    sd_status status;
    try {
        Builder builder(parts);
        builder.build_tree();
        robot.source = parts.source.c_str();
        robot.name = dup(parts.model_name);
        builder.to_robot(&robot);
        sd_urdf_options uo;
        std::memset(&uo, 0, sizeof uo);
        const bool fixed_base = (options != nullptr && options->fixed_base) || parts.is_static;
        uo.floating_base = !builder.has_world_joint() && !fixed_base;
        uo.keep_fixed_joints = options != nullptr && options->keep_fixed_joints;
        status = sd_urdf_robot_build(&robot, &uo, model, err);
    } catch (...) {
        sd_urdf_robot_clear(&robot);
        throw;
    }
    sd_urdf_robot_clear(&robot);
    return status;
}

} // namespace sd_sdf
