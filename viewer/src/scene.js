// The 3D scene of a soadyn page: one THREE.Group per body holding its visuals (placed in the body
// frame), moved each frame to the body's world placement computed by the library (sd_kinematics);
// the skeleton (capsules between joint origins) with the joint axes, flexible bodies bent by their
// nodes' deflections, closure constraints as pairs of points that meet, body frames, inertia boxes
// and inter-body force arrows. World axes are soadyn's: z up. The camera frames the model where it
// starts and follows the root body when asked (data.follow: the library's default).
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { FlexBody } from './flex.js';
import { loadMeshFile } from './meshes.js';

const GREY = [0.62, 0.64, 0.68, 1];
const JOINT = [0.95, 0.55, 0.1, 1];
const CLOSURE = [[0.12, 0.37, 0.75, 1], [0.85, 0.25, 0.2, 1]]; // the two sides of a closure

export function material(rgba, matte) {
  const c = rgba || GREY;
  return new THREE.MeshStandardMaterial({
    color: new THREE.Color(c[0], c[1], c[2]),
    transparent: c[3] < 1,
    opacity: c[3],
    roughness: matte ? 0.8 : 0.55,
    metalness: 0.05,
  });
}

// three.js builds cylinders and capsules along y; soadyn (URDF, MJCF) along z.
export const Y_TO_Z = new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(1, 0, 0), Math.PI / 2);

// Primitives are subdivided along their length so that a flexible body's visuals bend smoothly.
function geometry(v) {
  const s = v.size;
  switch (v.type) {
    case 'box': return new THREE.BoxGeometry(2 * s[0], 2 * s[1], 2 * s[2], 24, 4, 4);
    case 'sphere': return new THREE.SphereGeometry(s[0], 24, 16);
    case 'ellipsoid': {
      const g = new THREE.SphereGeometry(1, 24, 16);
      g.scale(s[0], s[1], s[2]);
      return g;
    }
    case 'cylinder': return new THREE.CylinderGeometry(s[0], s[0], 2 * s[1], 24, 16).applyQuaternion(Y_TO_Z);
    case 'capsule': return new THREE.CapsuleGeometry(s[0], 2 * s[1], 6, 16, 16).applyQuaternion(Y_TO_Z);
    case 'mesh': {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.Float32BufferAttribute(v.vertices, 3));
      if (v.indices) g.setIndex(v.indices);
      g.scale(s[0], s[1], s[2]);
      g.computeVertexNormals();
      return g;
    }
    default: return null;
  }
}

function placed(object, v) {
  object.position.set(v.pos[0], v.pos[1], v.pos[2]);
  object.quaternion.set(v.quat[1], v.quat[2], v.quat[3], v.quat[0]); // soadyn: w, x, y, z
  return object;
}

// a cylinder of radius r from a to b (body frame)
function rod(a, b, r, mat) {
  const d = new THREE.Vector3().subVectors(b, a), len = d.length();
  const m = new THREE.Mesh(new THREE.CylinderGeometry(r, r, 1, 12), mat);
  m.position.copy(a).addScaledVector(d, 0.5);
  if (len > 0) m.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), d.divideScalar(len));
  m.scale.set(1, len, 1);
  return m;
}

// Where the camera looks from (a unit vector from the target): square onto a flat model's plane (a
// planar mechanism, an arm moving in the horizontal plane), tilted a little so that depth shows;
// else from the front right, slightly above.
function viewDirection(size) {
  const dims = size.toArray(), thin = dims.indexOf(Math.min(...dims));
  if (dims[thin] < 0.2 * Math.max(...dims)) {
    const d = [0.3, -0.35, 0.3];
    d[thin] = thin === 1 ? -1 : 1; // from -y (x to the right, z up) or from above
    return new THREE.Vector3(...d).normalize();
  }
  return new THREE.Vector3(1, -1.3, 0.6).normalize();
}

// The skeleton of body b: capsules from its joint to its children's joints and closure points, a
// ball at the joint and the joint's axis through it (a rod; a prismatic one is a square bar).
function skeletonOf(b, r) {
  const grey = material(null, true), joint = material(JOINT, true);
  const skeleton = new THREE.Group();
  for (const v of b.skeleton) skeleton.add(placed(new THREE.Mesh(geometry(v), grey), v));
  skeleton.add(new THREE.Mesh(new THREE.SphereGeometry(1.5 * r, 16, 12), joint));
  if (b.joint) {
    const a = new THREE.Vector3().fromArray(b.joint.axis).multiplyScalar(4 * r);
    const axis = rod(a.clone().negate(), a, 0.6 * r, joint);
    if (b.joint.kind === 'prismatic') axis.geometry = new THREE.BoxGeometry(1.2 * r, 1, 1.2 * r);
    skeleton.add(axis);
  }
  return skeleton;
}

export class Scene {
  constructor(container, data) {
    this.data = data;
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(window.devicePixelRatio || 1);
    container.appendChild(this.renderer.domElement);
    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0xf4f5f7);
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
    this.camera.up.set(0, 0, 1);
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x8090a0, 2.2));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(3, -4, 6);
    this.scene.add(sun);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.addEventListener('change', () => this.render());
    // a pan by the user moves the point followed
    this.controls.addEventListener('end', () => { if (this.anchor) this.anchor = this.rootPoint(this.controls.target); });
    this.pending = []; // mesh files still being parsed (glTF parses asynchronously)
    this.meshFiles = []; // per mesh file drawn: { name, format, vertices, distinct, triangles, object } (for tests)
    this.meshErrors = [];

    const r = data.skeleton_radius;
    const anyVisuals = data.bodies.some((b) => b.visuals.length > 0);
    this.bodies = data.bodies.map((b, k) => {
      const group = new THREE.Group();
      group.name = b.name;
      group.userData.soadynBody = b.name;
      const visuals = new THREE.Group();
      const flex = b.flex ? new FlexBody(b.flex, data, r) : null;
      for (const v of b.visuals) {
        if (v.type === 'mesh_file') {
          this.pending.push(this.addMeshFile(v, visuals, flex, k));
          continue;
        }
        const g = geometry(v);
        if (!g) continue;
        const mesh = placed(new THREE.Mesh(g, material(v.rgba, false)), v);
        visuals.add(mesh);
        if (flex) flex.deformObject(mesh);
      }
      const skeleton = skeletonOf(b, r);
      const box = new THREE.Group(); // the inertia box at the centre of mass
      if (b.inertia_box) {
        // translucent, so that the skeleton inside (or the visuals around) stays visible
        box.add(placed(new THREE.Mesh(geometry(b.inertia_box),
          material([0.85, 0.55, 0.25, b.visuals.length ? 0.45 : 0.35], true)), b.inertia_box));
      }
      const axes = new THREE.AxesHelper(data.size * 0.25);
      group.add(visuals, skeleton, box, axes);
      if (flex) group.add(flex.line);
      this.scene.add(group);
      // a body without visuals shows its skeleton; in a model with visuals, only when it has mass (a
      // massless one is a link of a joint chain, an MJCF body of several joints: its neighbours draw it)
      const bare = b.visuals.length === 0 && (!anyVisuals || !!b.inertia_box || !!b.flex);
      return { group, visuals, skeleton, box, axes, flex, index: k, bare };
    });

    // closures: the two sides' points (blue: F_A, red: F_B) and a line between them (zero when closed)
    this.closures = data.closures.map(() => {
      const pair = [0, 1].map((s) => new THREE.Mesh(new THREE.SphereGeometry(1.4 * r, 16, 12), material(CLOSURE[s], true)));
      const ring = new THREE.Mesh(new THREE.TorusGeometry(2.6 * r, 0.35 * r, 8, 32), material(CLOSURE[1], true));
      const gap = new THREE.Line(new THREE.BufferGeometry().setFromPoints([new THREE.Vector3(), new THREE.Vector3()]),
        new THREE.LineBasicMaterial({ color: 0xc0392b }));
      this.scene.add(pair[0], pair[1], ring, gap);
      return { pair, ring, gap };
    });

    const grid = new THREE.GridHelper(Math.max(2, Math.ceil(data.motion_size * 4)), 20, 0xb0b4bc, 0xd4d7dc);
    grid.quaternion.copy(Y_TO_Z); // into the x-y plane
    grid.position.set(data.motion_center[0], data.motion_center[1], data.ground); // below the lowest body origin
    this.scene.add(grid);

    this.arrows = data.bodies.map(() => {
      const a = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, 0xc0392b);
      this.scene.add(a);
      return a;
    });
    this.follow = !!data.follow;
    this.showSkeleton = false;
    this.setFrames(!!data.show_frames);
    this.setForces(!!data.show_forces && !!data.forces);
    this.setInertia(false);
    this.setSkeleton(false);
    this.ready = Promise.allSettled(this.pending).then(() => { this.frameModel(); this.render(); });
  }

  // A mesh file of body k (COLLADA, glTF) parsed into its visuals; counted for tests. One that cannot
  // be parsed is said on the page (main.js) and the body shows its skeleton.
  addMeshFile(v, visuals, flex, k) {
    return loadMeshFile(v).then((object) => {
      if (v.rgba) object.traverse((o) => { if (o.isMesh) o.material = material(v.rgba, false); });
      const holder = placed(new THREE.Group(), v);
      holder.scale.set(v.size[0], v.size[1], v.size[2]);
      holder.add(object);
      visuals.add(holder);
      if (flex) flex.deformObject(holder);
      let vertices = 0, triangles = 0;
      const distinct = new Set();
      object.traverse((o) => {
        if (!o.isMesh) return;
        const p = o.geometry.getAttribute('position');
        for (let i = 0; i < p.count; ++i) distinct.add(p.getX(i) + ',' + p.getY(i) + ',' + p.getZ(i));
        vertices += p.count;
        triangles += (o.geometry.index ? o.geometry.index.count : p.count) / 3;
      });
      this.meshFiles.push({ name: v.name, format: v.format, vertices, distinct: distinct.size, triangles, object });
      this.render();
    }, (e) => {
      this.meshErrors.push(v.name + ': ' + (e && e.message ? e.message : String(e)));
      this.bodies[k].bare = true;
      this.setSkeleton(this.showSkeleton);
    });
  }

  // The camera frames the model as it is at the first frame: its box (visuals, skeleton, boxes)
  // fills 90% of the narrower of the two fields of view, seen as viewDirection says.
  // A camera that does not follow the root frames the body origins' motion too (a robot arm's sweep).
  frameModel() {
    const keep = this.frame;
    this.setFrame(0, true);
    const d = this.data, box = this.bodyBox();
    const around = (c, r) => new THREE.Box3().setFromCenterAndSize(new THREE.Vector3().fromArray(c), new THREE.Vector3(2 * r, 2 * r, 2 * r));
    if (box.isEmpty()) box.copy(around(d.center, d.size));
    if (!this.follow) { // every body origin over the motion
      const p = d.poses, v = new THREE.Vector3();
      for (let o = 0; o < p.length; o += 7) box.expandByPoint(v.set(p[o], p[o + 1], p[o + 2]));
    }
    const sphere = box.getBoundingSphere(new THREE.Sphere());
    const vfov = THREE.MathUtils.degToRad(this.camera.fov);
    const hfov = 2 * Math.atan(Math.tan(vfov / 2) * this.camera.aspect);
    let dist = (1.05 * sphere.radius) / Math.sin(Math.min(vfov, hfov) / 2); // the sphere in view
    const dir = viewDirection(box.getSize(new THREE.Vector3()));
    this.controls.target.copy(sphere.center);
    this.camera.near = dist / 100;
    this.camera.far = dist * 100 + 10 * d.motion_size;
    // then closer, until the box's corners fill 90% of the view (the sphere is loose around a box)
    for (let pass = 0; pass < 3; ++pass) {
      this.camera.position.copy(sphere.center).addScaledVector(dir, dist);
      this.camera.lookAt(sphere.center);
      this.camera.updateMatrixWorld(true);
      this.camera.updateProjectionMatrix();
      let reach = 0;
      for (let i = 0; i < 8; ++i) {
        const v = new THREE.Vector3(i & 1 ? box.max.x : box.min.x, i & 2 ? box.max.y : box.min.y, i & 4 ? box.max.z : box.min.z);
        const depth = v.clone().sub(this.camera.position).dot(dir.clone().negate());
        const ndc = v.project(this.camera);
        if (depth <= this.camera.near) { reach = Infinity; break; }
        reach = Math.max(reach, Math.abs(ndc.x), Math.abs(ndc.y));
      }
      if (!(reach > 0) || !isFinite(reach)) break;
      dist *= Math.min(1, Math.max(0.5, reach / 0.9));
    }
    this.camera.position.copy(sphere.center).addScaledVector(dir, dist);
    this.camera.updateProjectionMatrix();
    this.controls.update();
    this.anchor = this.rootPoint(this.controls.target);
    this.setFrame(keep === undefined ? 0 : keep);
  }

  // the world box of what is drawn for the bodies (visible meshes), at the frame shown
  bodyBox() {
    const box = new THREE.Box3();
    this.scene.updateMatrixWorld(true);
    for (const b of this.bodies)
      b.group.traverseVisible((o) => { if (o.isMesh) box.expandByObject(o); });
    return box;
  }

  // The screen extent of every drawn vertex of the bodies, in fractions of the view (y down): what
  // the camera keeps in view.
  screenExtent() {
    this.scene.updateMatrixWorld(true);
    this.camera.updateMatrixWorld(true);
    const e = { left: Infinity, right: -Infinity, top: Infinity, bottom: -Infinity }, v = new THREE.Vector3();
    for (const b of this.bodies)
      b.group.traverseVisible((o) => {
        if (!o.isMesh) return;
        const p = o.geometry.getAttribute('position');
        for (let i = 0; i < p.count; ++i) {
          v.fromBufferAttribute(p, i).applyMatrix4(o.matrixWorld).project(this.camera);
          const x = (v.x + 1) / 2, y = (1 - v.y) / 2;
          e.left = Math.min(e.left, x); e.right = Math.max(e.right, x);
          e.top = Math.min(e.top, y); e.bottom = Math.max(e.bottom, y);
        }
      });
    return e;
  }

  // The point the camera looks at, fixed in the root body (its frame's coordinates of the world point
  // p): followed, it moves and turns with the root, so that a tumbling model stays in view.
  rootPoint(p) {
    if (!this.bodies.length) return p.clone();
    const g = this.bodies[0].group;
    g.updateMatrixWorld(true);
    return g.worldToLocal(p.clone());
  }

  resize(w, h) {
    this.renderer.setSize(w, h);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    if (!this.framed) { this.framed = true; this.frameModel(); }
    this.render();
  }

  setFrames(on) { for (const b of this.bodies) b.axes.visible = on; this.render(); }

  // Inertia boxes: on request (the skeleton shows the mechanism).
  setInertia(on) {
    for (const b of this.bodies) b.box.visible = on;
    this.showInertia = on;
    this.render();
  }

  // The skeleton and joint axes (and a flexible body's line of nodes): always for a body without
  // visuals, for all on request.
  setSkeleton(on) {
    for (const b of this.bodies) {
      b.skeleton.visible = on || b.bare;
      if (b.flex) b.flex.line.visible = on || b.bare;
    }
    this.showSkeleton = on;
    this.render();
  }

  setFollow(on) {
    this.follow = on;
    this.anchor = this.rootPoint(this.controls.target);
  }

  setForces(on) {
    this.showForces = on && !!this.data.forces;
    for (const a of this.arrows) a.visible = false;
    if (this.frame !== undefined) this.setFrame(this.frame);
    else this.render();
  }

  setFrame(i, quiet) {
    const d = this.data, nb = d.bodies.length;
    this.frame = i;
    for (let k = 0; k < nb; ++k) {
      const p = d.poses, o = (i * nb + k) * 7;
      const b = this.bodies[k], g = b.group;
      g.position.set(p[o], p[o + 1], p[o + 2]);
      g.quaternion.set(p[o + 4], p[o + 5], p[o + 6], p[o + 3]);
      if (b.flex) b.flex.setFrame(i);
      const a = this.arrows[k];
      if (this.showForces) {
        const f = d.forces, j = (i * nb + k) * 6;
        const F = new THREE.Vector3(f[j + 3], f[j + 4], f[j + 5]);
        const n = F.length();
        a.visible = n > 0;
        if (n > 0) {
          const len = (n / d.force_max) * d.size * 0.5;
          a.position.set(p[o], p[o + 1], p[o + 2]);
          a.setDirection(F.divideScalar(n));
          a.setLength(len, Math.min(0.3 * len, d.size * 0.05), Math.min(0.15 * len, d.size * 0.025));
        }
      }
    }
    const nc = d.closures.length;
    this.closures.forEach((c, j) => {
      const o = (i * nc + j) * 6, x = d.closure_points;
      c.pair[0].position.set(x[o], x[o + 1], x[o + 2]);
      c.pair[1].position.set(x[o + 3], x[o + 4], x[o + 5]);
      c.ring.position.copy(c.pair[1].position);
      c.ring.quaternion.copy(this.camera.quaternion); // a ring facing the viewer around F_B's point
      c.gap.geometry.setFromPoints([c.pair[0].position, c.pair[1].position]);
    });
    if (this.follow && !quiet && this.anchor && this.bodies.length) { // the camera moves, not turns, with it
      const g = this.bodies[0].group;
      g.updateMatrixWorld(true);
      const delta = g.localToWorld(this.anchor.clone()).sub(this.controls.target);
      this.camera.position.add(delta);
      this.controls.target.add(delta);
      this.controls.update();
    }
    if (!quiet) this.render();
  }

  render() { this.renderer.render(this.scene, this.camera); }
}
