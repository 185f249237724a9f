/*
 * io/sdf_reader.cc — SDF models in through libsdformat 12 (the library's only C++, behind the C
 * interface of soadyn/sdf.h; no exception leaves it).
 *
 * libsdformat parses the file, follows <include>s and resolves every pose (relative_to, nested
 * models, <frame>s) in its pose graph; this file asks it for each link's frame, each joint's frame,
 * parent and child, each frame's link and each axis direction in the loaded model's frame M
 * (io/sdf_parts.hh: SdfParts).
 *
 * The second half, from those resolved poses to the model (frames, the root, the spanning tree and
 * loops, inertials, axes), is io/sdf_build.cc (io/sdf_parts.hh says what passes between them).
 *
 * Errors: libsdformat's (with their own file and line), then ours, naming the file, the line of the
 * element where it came from this file, and the element. Console output of libsdformat is captured
 * for the duration of a load (one load at a time: the console is process-wide).
 */
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <console_bridge/console.h>
#include <sdf/Console.hh>
#include <sdf/Element.hh>
#include <sdf/Error.hh>
#include <sdf/Frame.hh>
#include <sdf/Joint.hh>
#include <sdf/JointAxis.hh>
#include <sdf/Link.hh>
#include <sdf/Model.hh>
#include <sdf/ParserConfig.hh>
#include <sdf/Root.hh>
#include <sdf/SemanticPose.hh>
#include <sdf/World.hh>

#include <libxml/tree.h> /* before the C block: under C++ it brings ICU's C++ templates */

#include "io/sdf_parts.hh"

extern "C" {
#include <soadyn/sdf.h>
#include <soadyn/urdf.h> /* SD_MODEL_FILE_MAX_BYTES */

#include "io/xml_read.h"
#include "model/model_bounds.h"
}

namespace sd_sdf {

void fail(const std::string &source, sd_status status, int line, const std::string &what)
{
    std::ostringstream s;
    s << source;
    if (line > 0) s << ":" << line;
    s << ": " << what;
    throw Failure{status, s.str()};
}

sd_transform to_transform(const ignition::math::Pose3d &pose)
{
    sd_transform X;
    const auto &q = pose.Rot();
    double w = q.W(), x = q.X(), y = q.Y(), z = q.Z();
    const double n = std::sqrt(w * w + x * x + y * y + z * z);
    if (n > 0.0 && std::isfinite(n)) { w /= n; x /= n; y /= n; z /= n; }
    X.R[0] = 1 - 2 * (y * y + z * z); X.R[1] = 2 * (x * y - w * z);     X.R[2] = 2 * (x * z + w * y);
    X.R[3] = 2 * (x * y + w * z);     X.R[4] = 1 - 2 * (x * x + z * z); X.R[5] = 2 * (y * z - w * x);
    X.R[6] = 2 * (x * z - w * y);     X.R[7] = 2 * (y * z + w * x);     X.R[8] = 1 - 2 * (x * x + y * y);
    X.p[0] = pose.Pos().X();
    X.p[1] = pose.Pos().Y();
    X.p[2] = pose.Pos().Z();
    return X;
}

} // namespace sd_sdf

namespace {

using namespace sd_sdf;

/* The first half: libsdformat's loaded model -> SdfParts, every pose resolved in its graphs. */
class Collector {
public:
    Collector(SdfParts &parts, const std::string &file_path) : parts_(parts), file_path_(file_path) {}

    void collect(const sdf::Model &model, const std::string &prefix, const sd_transform &X_M_N);

    [[noreturn]] void fail(sd_status status, int line, const std::string &what) const
    {
        sd_sdf::fail(parts_.source, status, line, what);
    }

private:
    int line_of(const sdf::ElementPtr &e) const
    {
        if (!e) return 0;
        if (!file_path_.empty() && e->FilePath() != file_path_) return 0; /* an included file's line */
        const auto line = e->LineNumber();
        return line ? *line : 0;
    }
    sd_transform resolve(const sdf::SemanticPose &sp, const std::string &what, int line) const
    {
        ignition::math::Pose3d pose;
        const sdf::Errors errors = sp.Resolve(pose, "__model__");
        if (!errors.empty()) fail(SD_E_PARSE, line, what + ": its pose cannot be resolved: " + errors[0].Message());
        if (!finite_pose(pose)) fail(SD_E_PARSE, line, what + ": its pose is not finite");
        return to_transform(pose);
    }
    void check_offset(const sd_transform &X, const std::string &what, int line) const
    {
        for (int i = 0; i < 3; ++i)
            if (std::fabs(X.p[i]) > SD_MAX_LENGTH) {
                std::ostringstream s;
                s << what << ": its frame lies " << X.p[i] << " m from the model frame, beyond " << SD_MAX_LENGTH
                  << " m, the bound of physical models";
                fail(SD_E_PARSE, line, s.str());
            }
    }

    SdfParts &parts_;
    std::string file_path_;
};

/* Links and joints of `model` and its nested models, names scoped by `prefix`, poses in the top model's
 * frame M; X_M_N is this model's frame in M. */
void Collector::collect(const sdf::Model &model, const std::string &prefix, const sd_transform &X_M_N)
{
    for (uint64_t i = 0; i < model.LinkCount(); ++i) {
        const sdf::Link *link = model.LinkByIndex(i);
        LinkInfo info;
        info.name = prefix + link->Name();
        info.link = link;
        info.line = line_of(link->Element());
        info.X_M_L = compose(X_M_N, resolve(link->SemanticPose(), quoted("link", info.name), info.line));
        check_offset(info.X_M_L, quoted("link", info.name), info.line);
        parts_.links.push_back(info);
    }
    for (uint64_t i = 0; i < model.JointCount(); ++i) {
        const sdf::Joint *joint = model.JointByIndex(i);
        JointInfo info;
        info.name = prefix + joint->Name();
        info.joint = joint;
        info.line = line_of(joint->Element());
        const std::string what = quoted("joint", info.name);
        std::string parent, child;
        if (joint->ParentLinkName() == "world") {
            if (!prefix.empty()) fail(SD_E_NOT_SUPPORTED, info.line, what + ": a nested model's joint to 'world'");
            parent = "world";
        } else {
            const sdf::Errors e = joint->ResolveParentLink(parent);
            if (!e.empty()) fail(SD_E_PARSE, info.line, what + ": parent '" + joint->ParentLinkName() + "': " + e[0].Message());
            parent = prefix + parent;
        }
        if (joint->ChildLinkName() == "world") fail(SD_E_PARSE, info.line, what + ": 'world' cannot be a child link");
        const sdf::Errors e = joint->ResolveChildLink(child);
        if (!e.empty()) fail(SD_E_PARSE, info.line, what + ": child '" + joint->ChildLinkName() + "': " + e[0].Message());
        info.parent = parent;
        info.child = prefix + child;
        info.X_M_J = compose(X_M_N, resolve(joint->SemanticPose(), what, info.line));
        check_offset(info.X_M_J, what, info.line);
        /* each axis's direction in the joint frame (resolved through expressed_in), and the text's numbers */
        for (unsigned a = 0; a < 2; ++a) {
            const sdf::JointAxis *axis = joint->Axis(a);
            if (axis == nullptr) continue;
            const sdf::Errors axis_errors = axis->ResolveXyz(info.axis[a].xyz);
            if (!axis_errors.empty()) info.axis[a].error = axis_errors[0].Message();
            info.axis[a].raw = info.axis[a].xyz;
            const sdf::ElementPtr axis_element = axis->Element();
            if (axis_element && axis_element->HasElement("xyz"))
                info.axis[a].raw = axis_element->FindElement("xyz")->Get<ignition::math::Vector3d>();
        }
        parts_.joints.push_back(info);
    }
    for (uint64_t i = 0; i < model.FrameCount(); ++i) {
        const sdf::Frame *frame = model.FrameByIndex(i);
        FrameInfo info;
        info.name = prefix + frame->Name();
        info.line = line_of(frame->Element());
        const std::string what = quoted("frame", info.name);
        std::string body;
        const sdf::Errors e = frame->ResolveAttachedToBody(body);
        if (!e.empty()) fail(SD_E_PARSE, info.line, what + ": " + e[0].Message());
        /* attached to the model frame (a static frame) or beyond: the model's canonical link carries it */
        if (body == "world") fail(SD_E_NOT_SUPPORTED, info.line, what + ": a frame attached to 'world'");
        info.link = body == "__model__" || body.empty() ? std::string() : prefix + body;
        info.X_M_F = compose(X_M_N, resolve(frame->SemanticPose(), what, info.line));
        check_offset(info.X_M_F, what, info.line);
        parts_.frames.push_back(info);
    }
    for (uint64_t i = 0; i < model.ModelCount(); ++i) {
        const sdf::Model *nested = model.ModelByIndex(i);
        const std::string name = prefix + nested->Name();
        ignition::math::Pose3d pose;
        const sdf::Errors e = nested->SemanticPose().Resolve(pose);
        const int line = line_of(nested->Element());
        if (!e.empty()) fail(SD_E_PARSE, line, quoted("model", name) + ": its pose cannot be resolved: " + e[0].Message());
        if (!finite_pose(pose)) fail(SD_E_PARSE, line, quoted("model", name) + ": its pose is not finite");
        collect(*nested, name + "::", compose(X_M_N, to_transform(pose)));
    }
}

/* One load at a time: libsdformat's console is process-wide, and its output is captured. */
std::mutex console_mutex;

/* The line of the element of this file that a libsdformat message names ("joint with name[j]",
 * "Joint type of hinge"), found in the parsed element tree; 0 if none. The frame-graph errors of
 * libsdformat 12 carry no line of their own. */
int find_line(const sdf::ElementPtr &root, const std::string &file, const std::string &kind, const std::string &attr,
              const std::string &value, bool last)
{
    int found = 0;
    std::vector<sdf::ElementPtr> stack{root};
    while (!stack.empty()) {
        sdf::ElementPtr e = stack.back();
        stack.pop_back();
        if (!e) continue;
        if (e->GetName() == kind && e->HasAttribute(attr) && e->GetAttribute(attr)->GetAsString() == value &&
            (file.empty() || e->FilePath() == file) && e->LineNumber()) {
            if (found == 0 || last) found = *e->LineNumber();
            if (!last) return found;
        }
        std::vector<sdf::ElementPtr> children;
        for (sdf::ElementPtr c = e->GetFirstElement(); c; c = c->GetNextElement()) children.push_back(c);
        stack.insert(stack.end(), children.rbegin(), children.rend());
    }
    return found;
}

int line_from_message(const sdf::ElementPtr &root, const std::string &file, const std::string &msg)
{
    if (!root) return 0;
    static const char *const kinds[] = {"joint", "link", "frame", "model"};
    for (const char *kind : kinds) {
        const std::string key = std::string(kind) + " with name[";
        size_t at = msg.find(key);
        if (at == std::string::npos) {
            std::string upper = key;
            upper[0] = static_cast<char>(std::toupper(upper[0]));
            at = msg.find(upper);
        }
        if (at == std::string::npos) continue;
        const size_t from = at + key.size(), to = msg.find(']', from);
        if (to == std::string::npos) continue;
        std::string name = msg.substr(from, to - from);
        const size_t scope = name.rfind("::");
        if (scope != std::string::npos) name = name.substr(scope + 2);
        const int line = find_line(root, file, kind, "name", name, msg.find("already exists") != std::string::npos);
        if (line > 0) return line;
    }
    const size_t vertex = msg.find("vertex [");
    if (vertex != std::string::npos) { /* graph messages: "vertex [model::name]" */
        const size_t from = vertex + 8, to = msg.find(']', from);
        std::string name = msg.substr(from, to == std::string::npos ? to : to - from);
        const size_t scope = name.rfind("::");
        if (scope != std::string::npos) name = name.substr(scope + 2);
        for (const char *kind : kinds) {
            const int line = find_line(root, file, kind, "name", name, false);
            if (line > 0) return line;
        }
    }
    const std::string type_key = "Joint type of ";
    const size_t at = msg.find(type_key);
    if (at != std::string::npos) {
        const size_t from = at + type_key.size(), to = msg.find(' ', from);
        return find_line(root, file, "joint", "type", msg.substr(from, to == std::string::npos ? to : to - from), false);
    }
    return 0;
}

std::string trimmed(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '.')) s.pop_back();
    return s;
}

/* "file:line: libsdformat: message (and N more errors)" for the first error. */
std::string describe_errors(const sdf::Errors &errors, const std::string &source, const sdf::ElementPtr &root,
                            const std::string &root_file, const std::string &console)
{
    std::ostringstream s;
    const sdf::Error &e = errors[0];
    std::string file = e.FilePath() ? *e.FilePath() : std::string();
    int line = e.LineNumber() ? *e.LineNumber() : 0;
    if (file.empty() || file == "data-string" || file == root_file) {
        file = source;
        if (line <= 0) line = line_from_message(root, root_file, e.Message());
    }
    s << file;
    if (line > 0) s << ":" << line;
    s << ": libsdformat: " << trimmed(e.Message());
    /* "Error reading element <pose>" says where, libsdformat's console said why */
    if (e.Message().rfind("Error reading element", 0) == 0 && !console.empty()) {
        /* its first line, without colour codes and the "Error [Param.cc:576]" prefix */
        std::string first;
        for (size_t i = 0; i < console.size() && console[i] != '\n'; ++i) {
            if (console[i] == '\x1b') {
                while (i < console.size() && console[i] != 'm') ++i;
                continue;
            }
            first += console[i];
        }
        const size_t bracket = first.find("] ");
        if (first.find("Error [") != std::string::npos && bracket != std::string::npos) first = first.substr(bracket + 2);
        while (!first.empty() && first[0] == ' ') first.erase(0, 1);
        if (!first.empty()) s << " (" << trimmed(first) << ")";
    }
    if (errors.size() > 1) s << " (and " << errors.size() - 1 << " more error" << (errors.size() > 2 ? "s" : "") << ")";
    return s.str();
}

/* urdfdom, which libsdformat asks whether a file it could not read is a URDF, prints through
 * console_bridge: its messages are kept here instead of reaching stderr. */
class QuietHandler : public console_bridge::OutputHandler {
public:
    void log(const std::string &text, console_bridge::LogLevel, const char *, int) override { text_ += text + "\n"; }
    std::string text_;
};

/* Load with libsdformat (from `path` when given, so that <include>s resolve beside it, else from the
 * text) and build the model; `text` is the whole input in both cases. */
sd_status load(const char *text, size_t length, const char *path, const std::string &source,
               const sd_sdf_options *options, sd_model **model, sd_error *err)
{
    return guarded(source, err, [&]() -> sd_status {
        std::lock_guard<std::mutex> lock(console_mutex);
        sdf::Root root;
        sdf::Errors errors;
        std::ostringstream console;
        QuietHandler quiet;
        {
            /* libsdformat prints warnings (and some errors) on its console, urdfdom through
             * console_bridge: both are kept out of stderr for the load */
            auto &stream = sdf::Console::Instance()->GetMsgStream();
            std::ostream *saved = stream.GetStream();
            stream.SetStream(&console);
            console_bridge::useOutputHandler(&quiet);
            sdf::ParserConfig config;
            config.SetWarningsPolicy(sdf::EnforcementPolicy::LOG);
            config.SetUnrecognizedElementsPolicy(sdf::EnforcementPolicy::LOG);
            config.SetDeprecatedElementsPolicy(sdf::EnforcementPolicy::LOG);
            try {
                errors = path != nullptr ? root.Load(path, config) : root.LoadSdfString(std::string(text, length), config);
            } catch (...) {
                console_bridge::restorePreviousOutputHandler();
                stream.SetStream(saved);
                throw;
            }
            console_bridge::restorePreviousOutputHandler();
            stream.SetStream(saved);
        }
        /* an inertia libsdformat finds invalid (zero mass, a broken triangle inequality) is checked below as
         * the URDF reader checks it: zero-mass links are normal in robot files */
        sdf::Errors kept;
        for (const auto &e : errors)
            if (e.Code() != sdf::ErrorCode::LINK_INERTIA_INVALID) kept.push_back(e);
        const std::string root_file = root.Element() ? root.Element()->FilePath() : std::string();
        if (!kept.empty()) {
            /* "Unable to read file" of a file read a moment ago: its XML is broken, and libxml2 says where */
            if (kept.back().Code() == sdf::ErrorCode::FILE_READ || kept[0].Code() == sdf::ErrorCode::STRING_READ) {
                xmlDoc *doc = nullptr;
                sd_error xml_err;
                if (sd_xml_read(text, length, source.c_str(), &doc, &xml_err) != SD_OK)
                    throw Failure{SD_E_PARSE, xml_err.message};
                xmlFreeDoc(doc);
            }
            throw Failure{SD_E_PARSE, describe_errors(kept, source, root.Element(), root_file, console.str())};
        }
        const sdf::Model *m = nullptr;
        const char *wanted = options != nullptr ? options->model_name : nullptr;
        ignition::math::Pose3d model_pose;
        if (root.Model() != nullptr) {
            m = root.Model();
            if (wanted != nullptr && m->Name() != wanted)
                throw Failure{SD_E_ARGUMENT, source + ": no model named '" + wanted + "' (the file's model is '" +
                                                 m->Name() + "')"};
            model_pose = m->RawPose();
        } else {
            for (uint64_t w = 0; w < root.WorldCount() && m == nullptr; ++w) {
                const sdf::World *world = root.WorldByIndex(w);
                for (uint64_t i = 0; i < world->ModelCount() && m == nullptr; ++i) {
                    const sdf::Model *cand = world->ModelByIndex(i);
                    if (wanted == nullptr || cand->Name() == wanted) {
                        m = cand;
                        const sdf::Errors e = m->SemanticPose().Resolve(model_pose, "world");
                        if (!e.empty())
                            throw Failure{SD_E_PARSE, describe_errors(e, source, root.Element(), root_file, "")};
                    }
                }
            }
            if (m == nullptr)
                throw Failure{SD_E_PARSE, source + (wanted ? ": no model named '" + std::string(wanted) + "'"
                                                           : std::string(": no <model> in the file"))};
        }
        SdfParts parts;
        parts.source = source;
        parts.model_name = m->Name();
        parts.is_static = m->Static();
        Collector collector(parts, root_file);
        if (!finite_pose(model_pose)) collector.fail(SD_E_PARSE, 0, quoted("model", m->Name()) + ": its pose is not finite");
        parts.X_W_M = to_transform(model_pose);
        sd_transform identity;
        sd_transform_identity(&identity);
        collector.collect(*m, "", identity);
        for (size_t i = 0; i < parts.links.size(); ++i)
            if (parts.links[i].link == m->CanonicalLink()) parts.canonical = static_cast<int>(i);
        return build_model(parts, options, model, err);
    });
}

} // namespace

extern "C" sd_status sd_sdf_load_file(const char *path, const sd_sdf_options *options, sd_model **model, sd_error *err)
{
    if (err != nullptr) { err->status = SD_OK; err->message[0] = '\0'; }
    if (path == nullptr || model == nullptr)
        return sd_io_fail(err, SD_E_ARGUMENT, "sd_sdf_load_file", 0, "%s is NULL", path == nullptr ? "path" : "model");
    *model = nullptr;
    /* the io layer's checks first: a regular file, not too large (libsdformat would hang on a FIFO) */
    char *text = nullptr;
    size_t length = 0;
    sd_status st = sd_io_read_model_file(path, &text, &length, err);
    if (st != SD_OK) return st;
    if (std::memchr(text, '\0', length) != nullptr)
        st = sd_io_fail(err, SD_E_PARSE, path, 0, "the file holds a NUL byte: not an SDF (XML) file");
    else
        st = load(text, length, path, path, options, model, err);
    std::free(text);
    return st;
}

extern "C" sd_status sd_sdf_load_string(const char *text, size_t length, const char *source_name,
                                        const sd_sdf_options *options, sd_model **model, sd_error *err)
{
    if (err != nullptr) { err->status = SD_OK; err->message[0] = '\0'; }
    const char *src = source_name != nullptr ? source_name : "<string>";
    if (text == nullptr || model == nullptr)
        return sd_io_fail(err, SD_E_ARGUMENT, "sd_sdf_load_string", 0, "%s is NULL", text == nullptr ? "text" : "model");
    *model = nullptr;
    if (length > SD_MODEL_FILE_MAX_BYTES)
        return sd_io_fail(err, SD_E_IO, src, 0, "file too large (%zu bytes; at most %zu)", length,
                          (size_t)SD_MODEL_FILE_MAX_BYTES);
    if (std::memchr(text, '\0', length) != nullptr)
        return sd_io_fail(err, SD_E_PARSE, src, 0, "the text holds a NUL byte: not an SDF (XML) file");
    try {
        return load(text, length, nullptr, src, options, model, err);
    } catch (...) {
        return sd_io_fail(err, SD_E_MEMORY, src, 0, "out of memory");
    }
}
