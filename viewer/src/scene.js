// The 3D scene of a soadyn page: one THREE.Group per body holding its visuals (placed in the body
// frame), moved each frame to the body's world placement computed by the library (sd_kinematics);
// body frames as axes, inertia boxes, and inter-body force arrows. World axes are soadyn's: z up.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const GREY = [0.62, 0.64, 0.68, 1];

function material(rgba, fallback) {
  const c = rgba || GREY;
  return new THREE.MeshStandardMaterial({
    color: new THREE.Color(c[0], c[1], c[2]),
    transparent: c[3] < 1,
    opacity: c[3],
    roughness: fallback ? 0.8 : 0.55,
    metalness: 0.05,
  });
}

// three.js builds cylinders and capsules along y; soadyn (URDF, MJCF) along z.
const Y_TO_Z = new THREE.Quaternion().setFromAxisAngle(new THREE.Vector3(1, 0, 0), Math.PI / 2);

function geometry(v) {
  const s = v.size;
  switch (v.type) {
    case 'box': return new THREE.BoxGeometry(2 * s[0], 2 * s[1], 2 * s[2]);
    case 'sphere': return new THREE.SphereGeometry(s[0], 24, 16);
    case 'ellipsoid': {
      const g = new THREE.SphereGeometry(1, 24, 16);
      g.scale(s[0], s[1], s[2]);
      return g;
    }
    case 'cylinder': return new THREE.CylinderGeometry(s[0], s[0], 2 * s[1], 24).applyQuaternion(Y_TO_Z);
    case 'capsule': return new THREE.CapsuleGeometry(s[0], 2 * s[1], 6, 16).applyQuaternion(Y_TO_Z);
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

    this.bodies = data.bodies.map((b) => {
      const group = new THREE.Group();
      group.name = b.name;
      group.userData.soadynBody = b.name;
      const visuals = new THREE.Group();
      for (const v of b.visuals) {
        const g = geometry(v);
        if (g) visuals.add(placed(new THREE.Mesh(g, material(v.rgba, false)), v));
      }
      const skeleton = new THREE.Group(); // capsules joint frame to each child's: only without visuals
      for (const v of b.skeleton) skeleton.add(placed(new THREE.Mesh(geometry(v), material(null, true)), v));
      const box = new THREE.Group(); // the inertia box at the centre of mass
      if (b.inertia_box) {
        // translucent, so that the skeleton inside (or the visuals around) stays visible
        box.add(placed(new THREE.Mesh(geometry(b.inertia_box),
          material([0.85, 0.55, 0.25, b.visuals.length ? 0.45 : 0.6], true)), b.inertia_box));
      }
      const axes = new THREE.AxesHelper(data.scale * 0.12);
      group.add(visuals, skeleton, box, axes);
      this.scene.add(group);
      return { group, visuals, skeleton, box, axes, hasVisuals: b.visuals.length > 0 };
    });

    const grid = new THREE.GridHelper(Math.max(2, Math.ceil(data.scale * 4)), 20, 0xb0b4bc, 0xd4d7dc);
    grid.quaternion.copy(Y_TO_Z); // into the x-y plane
    grid.position.z = data.ground; // z = 0, or below the lowest body origin of the motion
    this.scene.add(grid);

    this.arrows = data.bodies.map(() => {
      const a = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, 0xc0392b);
      this.scene.add(a);
      return a;
    });
    this.setFrames(!!data.show_frames);
    this.setForces(!!data.show_forces && !!data.forces);
    this.setInertia(false);

    const c = data.center;
    this.controls.target.set(c[0], c[1], c[2]);
    // the whole motion in view: scale is half the diagonal of the box of body origins over it
    const r = data.scale * 1.9;
    this.camera.position.set(c[0] + r, c[1] - 1.3 * r, c[2] + 0.6 * r);
    this.controls.update();
  }

  resize(w, h) {
    this.renderer.setSize(w, h);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    this.render();
  }

  setFrames(on) { for (const b of this.bodies) b.axes.visible = on; this.render(); }

  // Inertia boxes: always for a body without visuals from the model file (beside its skeleton of
  // capsules), else on request.
  setInertia(on) {
    for (const b of this.bodies) b.box.visible = on || !b.hasVisuals;
    this.showInertia = on;
    this.render();
  }

  setForces(on) {
    this.showForces = on && !!this.data.forces;
    for (const a of this.arrows) a.visible = false;
    if (this.frame !== undefined) this.setFrame(this.frame);
    else this.render();
  }

  setFrame(i) {
    const d = this.data, nb = d.bodies.length;
    this.frame = i;
    for (let k = 0; k < nb; ++k) {
      const p = d.poses, o = (i * nb + k) * 7;
      const g = this.bodies[k].group;
      g.position.set(p[o], p[o + 1], p[o + 2]);
      g.quaternion.set(p[o + 4], p[o + 5], p[o + 6], p[o + 3]);
      const a = this.arrows[k];
      if (this.showForces) {
        const f = d.forces, j = (i * nb + k) * 6;
        const F = new THREE.Vector3(f[j + 3], f[j + 4], f[j + 5]);
        const n = F.length();
        a.visible = n > 0;
        if (n > 0) {
          const len = (n / d.force_max) * d.scale * 0.5;
          a.position.set(p[o], p[o + 1], p[o + 2]);
          a.setDirection(F.divideScalar(n));
          a.setLength(len, Math.min(0.3 * len, d.scale * 0.05), Math.min(0.15 * len, d.scale * 0.025));
        }
      }
    }
    this.render();
  }

  render() { this.renderer.render(this.scene, this.camera); }
}
