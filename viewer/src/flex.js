// A flexible body drawn bent: a line of rods through its nodes at their deflected places (the
// undeformed node plus the translation of Pi^node eta, 001 Eq 3, which the library writes per frame
// as "deflections": rotation 3, translation 3 per node, body axes), and its visuals deformed with
// it: each vertex follows the point of the node line nearest its undeformed place, moved as a rigid
// section of the beam there (translation plus the small rotation times the offset), interpolated
// between the two nodes around it.
import * as THREE from 'three';

const LINE = new THREE.MeshStandardMaterial({ color: 0x2f4f6f, roughness: 0.7, metalness: 0.05 });

export class FlexBody {
  constructor(flex, data, r) {
    this.data = data;
    this.offset = flex.offset;
    this.rest = flex.nodes.map((x) => new THREE.Vector3().fromArray(x));
    this.now = this.rest.map((x) => x.clone());
    this.theta = this.rest.map(() => new THREE.Vector3());
    this.shift = this.rest.map(() => new THREE.Vector3());
    this.line = new THREE.Group();
    this.line.name = 'flexible nodes';
    this.balls = this.rest.map(() => new THREE.Mesh(new THREE.SphereGeometry(0.7 * r, 12, 8), LINE));
    this.rods = this.rest.slice(1).map(() => new THREE.Mesh(new THREE.CylinderGeometry(0.4 * r, 0.4 * r, 1, 10), LINE));
    this.line.add(...this.balls, ...this.rods);
    this.meshes = [];
  }

  // Make the meshes inside `object` (already in the body's group) follow the deflection.
  deformObject(object) {
    let body = object;
    while (body.parent && body.userData.soadynBody === undefined) body = body.parent;
    body.updateMatrixWorld(true);
    const toBody = new THREE.Matrix4().copy(body.matrixWorld).invert();
    object.traverse((o) => {
      if (!o.isMesh) return;
      o.geometry = o.geometry.clone(); // deformed on its own
      const M = new THREE.Matrix4().multiplyMatrices(toBody, o.matrixWorld), Minv = M.clone().invert();
      const pos = o.geometry.getAttribute('position'), n = pos.count;
      const r = new Float32Array(3 * n), seg = new Int32Array(n), s = new Float32Array(n);
      const v = new THREE.Vector3();
      for (let i = 0; i < n; ++i) {
        v.fromBufferAttribute(pos, i).applyMatrix4(M);
        v.toArray(r, 3 * i);
        [seg[i], s[i]] = this.nearest(v);
      }
      this.meshes.push({ mesh: o, r, seg, s, M, Minv });
    });
  }

  // the segment (j, j + 1) of the undeformed node line nearest p, and the parameter along it
  nearest(p) {
    let best = [0, 0], bestd = Infinity;
    if (this.rest.length === 1) return best;
    const d = new THREE.Vector3(), q = new THREE.Vector3();
    for (let j = 0; j + 1 < this.rest.length; ++j) {
      d.subVectors(this.rest[j + 1], this.rest[j]);
      const l2 = d.lengthSq();
      const t = l2 > 0 ? THREE.MathUtils.clamp(q.subVectors(p, this.rest[j]).dot(d) / l2, 0, 1) : 0;
      const dist = q.copy(this.rest[j]).addScaledVector(d, t).distanceToSquared(p);
      if (dist < bestd) { bestd = dist; best = [j, t]; }
    }
    return best;
  }

  setFrame(i) {
    const D = this.data.deflections, base = (i * this.data.flex_nodes + this.offset) * 6;
    this.rest.forEach((x, j) => {
      const o = base + 6 * j;
      this.theta[j].set(D[o], D[o + 1], D[o + 2]);
      this.shift[j].set(D[o + 3], D[o + 4], D[o + 5]);
      this.now[j].copy(x).add(this.shift[j]);
      this.balls[j].position.copy(this.now[j]);
    });
    const up = new THREE.Vector3(0, 1, 0), dir = new THREE.Vector3();
    this.rods.forEach((rod, j) => {
      dir.subVectors(this.now[j + 1], this.now[j]);
      const len = dir.length();
      rod.position.copy(this.now[j]).addScaledVector(dir, 0.5);
      if (len > 0) rod.quaternion.setFromUnitVectors(up, dir.divideScalar(len));
      rod.scale.set(1, len, 1);
    });
    const a = new THREE.Vector3(), b = new THREE.Vector3(), p = new THREE.Vector3(), t = new THREE.Vector3();
    const section = (j, out) => out.subVectors(p, this.rest[j]).crossVectors(this.theta[j], out).add(this.shift[j]);
    for (const m of this.meshes) {
      const pos = m.mesh.geometry.getAttribute('position');
      for (let k = 0; k < pos.count; ++k) {
        p.fromArray(m.r, 3 * k);
        const j = m.seg[k], s = m.s[k];
        section(j, a);
        if (j + 1 < this.rest.length) section(j + 1, b); else b.copy(a);
        t.copy(p).addScaledVector(a, 1 - s).addScaledVector(b, s).applyMatrix4(m.Minv);
        pos.setXYZ(k, t.x, t.y, t.z);
      }
      pos.needsUpdate = true;
      m.mesh.geometry.computeVertexNormals();
      m.mesh.geometry.computeBoundingSphere();
      m.mesh.geometry.computeBoundingBox();
    }
  }

  // the deformed visuals' vertices, undeformed and as drawn, in the body frame (for tests)
  vertices() {
    const out = [], v = new THREE.Vector3();
    for (const m of this.meshes) {
      const pos = m.mesh.geometry.getAttribute('position');
      for (let k = 0; k < pos.count; ++k)
        out.push({ rest: Array.from(m.r.subarray(3 * k, 3 * k + 3)), now: v.fromBufferAttribute(pos, k).applyMatrix4(m.M).toArray() });
    }
    return out;
  }

  // the drawn nodes' world positions (for tests: what the page shows)
  nodesWorld() {
    this.line.updateWorldMatrix(true, true);
    return this.balls.map((ball) => ball.getWorldPosition(new THREE.Vector3()).toArray());
  }
}
