// Mesh files embedded in the page by the library (base64 in the visual's "data"): COLLADA (.dae)
// and glTF (.glb, or .gltf with its buffers inline) parsed by three.js's own loaders. Both loaders
// give a y-up scene; soadyn's world is z-up: a COLLADA file says its up axis (the loader turns a
// Z_UP one to y-up, which the turn here undoes), glTF is y-up by its specification (turned here to
// z-up, as Drake does). Images named by a file are not fetched (the page asks for nothing): every
// texture is a blank pixel, the materials' colours stay.
import * as THREE from 'three';
import { ColladaLoader } from 'three/addons/loaders/ColladaLoader.js';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { Y_TO_Z, material } from './scene.js';

const BLANK = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==';

function bytes(base64) {
  const s = atob(base64), b = new Uint8Array(s.length);
  for (let i = 0; i < s.length; ++i) b[i] = s.charCodeAt(i);
  return b;
}

function manager() {
  const m = new THREE.LoadingManager();
  m.setURLModifier(() => BLANK);
  return m;
}

// The file's scene turned to z-up, in a group (a Promise: glTF parses asynchronously).
export function loadMeshFile(v) {
  const turned = (object) => {
    object.traverse((o) => {
      if (!o.isMesh) return;
      // a file without normals would be drawn unlit: normals from its faces
      if (!o.geometry.getAttribute('normal')) o.geometry.computeVertexNormals();
      // a file without materials: the viewer's grey, lit, not the loader's unlit stand-in
      const plain = (m) => m.name === THREE.Loader.DEFAULT_MATERIAL_NAME || m.isMeshBasicMaterial;
      if (Array.isArray(o.material) ? o.material.some(plain) : plain(o.material)) o.material = material(null, false);
    });
    const g = new THREE.Group();
    g.quaternion.copy(Y_TO_Z);
    g.add(object);
    return g;
  };
  const data = bytes(v.data);
  if (v.format === 'dae') {
    return new Promise((resolve, reject) => {
      const collada = new ColladaLoader(manager()).parse(new TextDecoder().decode(data), '');
      if (collada && collada.scene) resolve(turned(collada.scene));
      else reject(new Error('not a COLLADA file'));
    });
  }
  return new Promise((resolve, reject) => {
    const text = v.format === 'gltf' ? new TextDecoder().decode(data) : data.buffer;
    new GLTFLoader(manager()).parse(text, '', (gltf) => resolve(turned(gltf.scene)), reject);
  });
}
