// Write models/meshed_arm: a four-joint arm whose links are meshes in every format the viewer reads
// (COLLADA .dae, glTF binary .glb, STL), made here from three.js's primitive geometries so that the
// repository ships a meshed robot of its own (the shared robots' mesh files are not distributed).
// The meshes are z-up in the link frames; the .glb files are written y-up, as glTF requires (the
// viewer turns them back), the .dae files say Z_UP.
// usage: NODE_PATH=<build>/viewer/node_modules node viewer/tools/make_meshed_arm.mjs models/meshed_arm
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const THREE = require('three');
const out = process.argv[2];
mkdirSync(out + '/meshes', { recursive: true });

// ---------------------------------------------------------------- shapes (z up, metres)

const turnYtoZ = new THREE.Matrix4().makeRotationX(Math.PI / 2); // three.js builds along y
const along = (g, x, y, z) => g.applyMatrix4(turnYtoZ).translate(x, y, z);
const acrossY = (g, x, y, z) => g.translate(x, y, z); // a cylinder's y axis: across the arm
// a solid of revolution about z through the (radius, height) points
const lathe = (profile, segments = 48) =>
  new THREE.LatheGeometry(profile.map(([r, h]) => new THREE.Vector2(r, h)), segments).applyMatrix4(turnYtoZ);

function pedestal() {
  return [lathe([[0, 0], [0.13, 0], [0.13, 0.02], [0.09, 0.05], [0.075, 0.13], [0.08, 0.15], [0, 0.15]])];
}
function shoulder() {
  return [along(new THREE.CylinderGeometry(0.075, 0.075, 0.1, 40), 0, 0, 0.05),
    acrossY(new THREE.CylinderGeometry(0.07, 0.07, 0.16, 40), 0, 0, 0.12)];
}
function upperArm() {
  return [lathe([[0, 0.02], [0.05, 0.02], [0.042, 0.2], [0.05, 0.38], [0, 0.38]]),
    acrossY(new THREE.CylinderGeometry(0.062, 0.062, 0.13, 40), 0, 0, 0.4)];
}
function forearm() {
  return [lathe([[0, 0.03], [0.045, 0.03], [0.035, 0.3], [0.04, 0.33], [0, 0.33]]),
    along(new THREE.CylinderGeometry(0.045, 0.045, 0.03, 32), 0, 0, 0.345)];
}
function hand() {
  return [new THREE.BoxGeometry(0.1, 0.04, 0.03).translate(0, 0, 0.015),
    new THREE.BoxGeometry(0.015, 0.025, 0.07).translate(0.035, 0, 0.065),
    new THREE.BoxGeometry(0.015, 0.025, 0.07).translate(-0.035, 0, 0.065)];
}

// The pieces as one indexed triangle list: positions, normals (3 per vertex), indices.
function merged(pieces) {
  const pos = [], nrm = [], idx = [];
  for (const g0 of pieces) {
    const g = g0.index ? g0 : g0.setIndex([...Array(g0.getAttribute('position').count).keys()]);
    g.computeVertexNormals();
    const base = pos.length / 3, p = g.getAttribute('position'), n = g.getAttribute('normal');
    for (let i = 0; i < p.count; ++i) { pos.push(p.getX(i), p.getY(i), p.getZ(i)); nrm.push(n.getX(i), n.getY(i), n.getZ(i)); }
    for (const i of g.index.array) idx.push(base + i);
  }
  return { pos, nrm, idx };
}

// ---------------------------------------------------------------- writers

function writeStl(path, m) {
  const nt = m.idx.length / 3, b = Buffer.alloc(84 + 50 * nt);
  b.write('soadyn meshed_arm', 0);
  b.writeUInt32LE(nt, 80);
  for (let t = 0; t < nt; ++t) {
    const o = 84 + 50 * t, v = [0, 1, 2].map((k) => m.idx[3 * t + k]);
    const p = v.map((i) => new THREE.Vector3(m.pos[3 * i], m.pos[3 * i + 1], m.pos[3 * i + 2]));
    const n = new THREE.Vector3().crossVectors(p[1].clone().sub(p[0]), p[2].clone().sub(p[0])).normalize();
    [n, ...p].forEach((x, k) => { b.writeFloatLE(x.x, o + 12 * k); b.writeFloatLE(x.y, o + 12 * k + 4); b.writeFloatLE(x.z, o + 12 * k + 8); });
  }
  writeFileSync(path, b);
}

function writeDae(path, m, rgb) {
  const f = (a) => a.map((x) => +x.toFixed(6)).join(' ');
  const nv = m.pos.length / 3, nt = m.idx.length / 3;
  writeFileSync(path, `<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><contributor><authoring_tool>soadyn viewer/tools/make_meshed_arm.mjs</authoring_tool></contributor>
    <unit name="meter" meter="1"/><up_axis>Z_UP</up_axis></asset>
  <library_effects><effect id="paint-effect"><profile_COMMON><technique sid="common"><phong>
    <diffuse><color>${rgb.join(' ')} 1</color></diffuse></phong></technique></profile_COMMON></effect></library_effects>
  <library_materials><material id="paint" name="paint"><instance_effect url="#paint-effect"/></material></library_materials>
  <library_geometries><geometry id="shape"><mesh>
    <source id="positions"><float_array id="positions-array" count="${3 * nv}">${f(m.pos)}</float_array>
      <technique_common><accessor source="#positions-array" count="${nv}" stride="3"><param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
    <source id="normals"><float_array id="normals-array" count="${3 * nv}">${f(m.nrm)}</float_array>
      <technique_common><accessor source="#normals-array" count="${nv}" stride="3"><param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
    <vertices id="vertices"><input semantic="POSITION" source="#positions"/><input semantic="NORMAL" source="#normals"/></vertices>
    <triangles count="${nt}" material="paint"><input semantic="VERTEX" source="#vertices" offset="0"/><p>${m.idx.join(' ')}</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="scene"><node id="link"><instance_geometry url="#shape">
    <bind_material><technique_common><instance_material symbol="paint" target="#paint"/></technique_common></bind_material>
  </instance_geometry></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
`);
}

// glTF 2.0 binary: positions and normals turned to y-up (x, z, -y), uint32 indices, one material.
function writeGlb(path, m, rgb) {
  const nv = m.pos.length / 3, yup = (a) => Float32Array.from({ length: a.length }, (_, i) => {
    const v = i - (i % 3), k = i % 3;
    return k === 0 ? a[v] : k === 1 ? a[v + 2] : -a[v + 1];
  });
  const pos = yup(m.pos), nrm = yup(m.nrm), idx = Uint32Array.from(m.idx);
  const lo = [0, 1, 2].map((k) => Math.min(...pos.filter((_, i) => i % 3 === k)));
  const hi = [0, 1, 2].map((k) => Math.max(...pos.filter((_, i) => i % 3 === k)));
  const bin = Buffer.concat([Buffer.from(pos.buffer), Buffer.from(nrm.buffer), Buffer.from(idx.buffer)]);
  const json = JSON.stringify({
    asset: { version: '2.0', generator: 'soadyn viewer/tools/make_meshed_arm.mjs' },
    scene: 0, scenes: [{ nodes: [0] }], nodes: [{ mesh: 0 }],
    materials: [{ pbrMetallicRoughness: { baseColorFactor: [...rgb, 1], metallicFactor: 0.1, roughnessFactor: 0.6 } }],
    meshes: [{ primitives: [{ attributes: { POSITION: 0, NORMAL: 1 }, indices: 2, material: 0 }] }],
    buffers: [{ byteLength: bin.length }],
    bufferViews: [{ buffer: 0, byteOffset: 0, byteLength: 12 * nv }, { buffer: 0, byteOffset: 12 * nv, byteLength: 12 * nv },
      { buffer: 0, byteOffset: 24 * nv, byteLength: 4 * idx.length }],
    accessors: [{ bufferView: 0, componentType: 5126, count: nv, type: 'VEC3', min: lo, max: hi },
      { bufferView: 1, componentType: 5126, count: nv, type: 'VEC3' },
      { bufferView: 2, componentType: 5125, count: idx.length, type: 'SCALAR' }],
  });
  const jsonBuf = Buffer.from(json.padEnd(Math.ceil(json.length / 4) * 4, ' '));
  const header = Buffer.alloc(12), jh = Buffer.alloc(8), bh = Buffer.alloc(8);
  header.write('glTF', 0);
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(12 + 8 + jsonBuf.length + 8 + bin.length, 8);
  jh.writeUInt32LE(jsonBuf.length, 0);
  jh.write('JSON', 4);
  bh.writeUInt32LE(bin.length, 0);
  bh.write('BIN\0', 4);
  writeFileSync(path, Buffer.concat([header, jh, jsonBuf, bh, bin]));
}

const ORANGE = [0.93, 0.45, 0.12], GREY = [0.55, 0.57, 0.6];
writeDae(`${out}/meshes/pedestal.dae`, merged(pedestal()), GREY);
writeGlb(`${out}/meshes/shoulder.glb`, merged(shoulder()), ORANGE);
writeGlb(`${out}/meshes/upper_arm.glb`, merged(upperArm()), ORANGE);
writeStl(`${out}/meshes/forearm.stl`, merged(forearm()));
writeDae(`${out}/meshes/hand.dae`, merged(hand()), GREY);
console.log('wrote ' + out + '/meshes: pedestal.dae, shoulder.glb, upper_arm.glb, forearm.stl, hand.dae');
