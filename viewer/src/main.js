// The page code of soadyn's viewer: reads the data the library wrote into the page (a JSON script
// element, id "soadyn-data"), builds the scene, the controls (play/pause, time slider, speed, body
// frames, skeleton and joint axes, inertia boxes, force arrows, camera following the root) and the
// plot, and plays the motion. Tests read the page through window.soadynView (read-only but for
// setFrame, which the slider does too).
import * as THREE from 'three';
import { Scene } from './scene.js';
import { Plot } from './plot.js';

function el(tag, attrs, children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
  }
  for (const c of children || []) e.appendChild(c);
  return e;
}

function checkbox(id, label, checked, disabled) {
  const box = el('input', { type: 'checkbox', id });
  box.checked = checked;
  box.disabled = disabled;
  return [box, el('label', {}, [box, document.createTextNode(' ' + label)])];
}

function start() {
  const data = JSON.parse(document.getElementById('soadyn-data').textContent);
  const n = data.times.length;
  const view = el('div', { id: 'view' });
  const play = el('button', { id: 'play', text: n > 1 ? 'Pause' : 'Play' });
  const slider = el('input', { id: 'slider', type: 'range', min: '0', max: String(Math.max(0, n - 1)), value: '0', step: '1' });
  const clock = el('span', { id: 'clock' });
  const speed = el('select', { id: 'speed' }, ['0.1', '0.25', '0.5', '1', '2', '4'].map((s) =>
    el('option', { value: s, text: s + 'x' })));
  speed.value = '1';
  const [frames, framesLabel] = checkbox('frames', 'body frames', !!data.show_frames, false);
  const [inertia, inertiaLabel] = checkbox('inertia', 'inertia boxes', false, false);
  const [skeleton, skeletonLabel] = checkbox('skeleton', 'skeleton and joint axes', false, false);
  const [follow, followLabel] = checkbox('follow', 'camera follows the root', !!data.follow, false);
  const [forces, forcesLabel] = checkbox('forces', 'inter-body forces', !!data.show_forces && !!data.forces, !data.forces);
  // several columns: ctrl-click (or shift-click) in the list
  const column = el('select', { id: 'column', multiple: '', size: '5' },
    data.columns.map((c, i) => el('option', { value: String(i), text: c })));
  column.options[0].selected = true;
  const canvas = el('canvas', { id: 'plot', width: '420', height: '240' });
  const legend = el('p', { id: 'legend', text: data.forces ? data.force_legend : 'Inter-body forces: not computed (soadyn view --forces).' });
  const note = el('p', { class: 'note', text: data.note });
  const side = el('div', { id: 'side' }, [
    el('h1', { text: data.title }),
    el('div', { class: 'row' }, [play, speed, clock]),
    el('div', { class: 'row' }, [slider]),
    el('div', { class: 'row' }, [framesLabel, skeletonLabel, inertiaLabel, forcesLabel, followLabel]),
    el('div', { class: 'row' }, [el('span', { text: 'plot (ctrl-click: several) ' }), column]),
    canvas, legend, note,
  ]);
  document.body.appendChild(el('div', { id: 'app' }, [view, side]));

  const scene = new Scene(view, data);
  scene.ready.then(() => {
    if (scene.meshErrors.length)
      note.textContent = scene.meshErrors.length + ' mesh file(s) could not be parsed here (' + scene.meshErrors[0] +
        '): such bodies show their skeleton. ' + note.textContent;
  });
  const plot = new Plot(canvas, data);
  let frame = 0, playing = n > 1, t = data.times[0] || 0, last = null;

  function show(i) {
    frame = Math.max(0, Math.min(n - 1, i | 0));
    slider.value = String(frame);
    clock.textContent = 't = ' + (data.times[frame] || 0).toFixed(3) + ' s';
    scene.setFrame(frame);
    plot.setFrame(frame);
  }
  function fit() { scene.resize(view.clientWidth, view.clientHeight); }
  window.addEventListener('resize', fit);
  fit();
  show(0);
  plot.draw();

  play.addEventListener('click', () => {
    playing = !playing && n > 1;
    if (playing && frame === n - 1) { t = data.times[0]; show(0); }
    play.textContent = playing ? 'Pause' : 'Play';
    last = null;
  });
  slider.addEventListener('input', () => { show(Number(slider.value)); t = data.times[frame]; });
  frames.addEventListener('change', () => scene.setFrames(frames.checked));
  inertia.addEventListener('change', () => scene.setInertia(inertia.checked));
  forces.addEventListener('change', () => scene.setForces(forces.checked));
  skeleton.addEventListener('change', () => scene.setSkeleton(skeleton.checked));
  follow.addEventListener('change', () => scene.setFollow(follow.checked));
  column.addEventListener('change', () => plot.setColumns(Array.from(column.selectedOptions, (o) => Number(o.value))));

  // Playback in simulated time: the last frame whose time is reached is shown.
  function tick(now) {
    if (playing && last !== null) {
      t += ((now - last) / 1000) * Number(speed.value);
      let i = frame;
      if (t < data.times[i]) i = 0;
      while (i + 1 < n && data.times[i + 1] <= t) ++i;
      if (i === n - 1) { playing = false; play.textContent = 'Play'; }
      if (i !== frame) show(i);
    }
    last = now;
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);

  window.soadynView = Object.freeze({
    nbodies: data.bodies.length,
    nframes: n,
    bodyNames: () => data.bodies.map((b) => b.name),
    // the scene's objects that stand for bodies (one THREE.Group each)
    bodyObjectCount: () => scene.scene.children.filter((o) => o.userData.soadynBody !== undefined).length,
    frame: () => frame,
    setFrame: (i) => { playing = false; play.textContent = 'Play'; show(i); },
    pause: () => { playing = false; play.textContent = 'Play'; },
    // the world placement a body's object has now: x, y, z, qw, qx, qy, qz
    pose: (k) => {
      const g = scene.bodies[k].group;
      return [g.position.x, g.position.y, g.position.z, g.quaternion.w, g.quaternion.x, g.quaternion.y, g.quaternion.z];
    },
    meshCount: () => { let c = 0; scene.scene.traverse((o) => { if (o.isMesh) ++c; }); return c; },
    // resolved when the mesh files are parsed (glTF parses asynchronously) and the camera framed
    ready: () => scene.ready.then(() => true),
    // per mesh file drawn: { name, format, vertices, distinct (positions), triangles, extent (its
    // world box's size at the frame shown) }; the failures
    meshFiles: () => scene.meshFiles.map(({ object, ...m }) => {
      scene.scene.updateMatrixWorld(true);
      return { ...m, extent: new THREE.Box3().setFromObject(object).getSize(new THREE.Vector3()).toArray() };
    }),
    meshErrors: () => scene.meshErrors.slice(),
    // world positions of a flexible body's drawn nodes (null for a rigid body)
    flexNodes: (k) => (scene.bodies[k].flex ? scene.bodies[k].flex.nodesWorld() : null),
    // a flexible body's deformed visuals: per vertex { rest, now } in the body frame (null: rigid)
    flexVertices: (k) => (scene.bodies[k].flex ? scene.bodies[k].flex.vertices() : null),
    // world positions of closure j's two drawn points
    closurePoints: (j) => scene.closures[j].pair.map((p) => p.position.toArray()),
    // a world point's place on the view, in pixels from its top left
    project: (p) => {
      const v = new THREE.Vector3(...p).project(scene.camera), c = scene.renderer.domElement;
      return [((v.x + 1) / 2) * c.clientWidth, ((1 - v.y) / 2) * c.clientHeight];
    },
    // the screen box (canvas fractions, y down) of the drawn bodies at the frame shown
    screenBox: () => scene.screenExtent(),
    // the value axis labels of the plot as drawn: { text, value, left (canvas px) }
    plotTicks: () => plot.ticks.map((t) => ({ ...t })),
    // the readout under the mouse pointer: { frame, lines } (null when the pointer is elsewhere)
    plotReadout: () => (plot.pointer === null ? null : { frame: plot.pointer, lines: plot.readout.slice() }),
  });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
