// The viewer in a real browser: headless Chromium (Debian's /usr/bin/chromium) driven by
// playwright-core (pinned in viewer/package-lock.json) opens a page written by soadyn and checks that
// it loads without console errors or page errors, that the scene has one object per body, that moving
// the time slider changes the pose, that every tick label of the plot, of every column, is drawn
// whole inside the canvas with the sign of its value, and saves a screenshot. What PAGE.html.expect
// (JSON, written by test_view beside the page) asks is checked too:
//   flex        {body, node, frames, tip, rigid}: the drawn node of the flexible body (its world
//               position on the page) is at `tip` (where the library's kinematics puts the child
//               riding on it), so away from the undeformed place `rigid` by the simulated deflection,
//               which shows on the view (projected, more than 20 px);
//   flex_visual {body, node_rest, frames, theta, t}: the vertices of the body's drawn visuals at the
//               node's station (undeformed x = node_rest's) move as the beam's rigid section
//               there, t + theta x (r - node_rest), by the node's deflection at each frame;
//   closures    {count, at}: each closure's two drawn points meet, at `at`, at every frame;
//   min_height  the drawn model's height on screen, at the first and the last frame, is at least
//               this fraction of the view's, and at the first frame it is not cropped;
//   mesh_files  [{format, distinct, triangles, extent}]: the mesh files drawn, their distinct vertex
//               positions and triangles as in the file, their world extents (up axis turned right).
// usage: node browser_test.mjs PAGE.html SCREENSHOT.png
//   the model's body count is read from PAGE.html.nbodies (test_view writes both); a page of one
//   configuration has no slider motion to check.
// Exit 0 pass, 1 fail, 77 skip (no Chromium, no playwright-core, or the page was not written).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [page, shot] = process.argv.slice(2);
if (!existsSync(page) || !existsSync(page + '.nbodies')) {
  console.log(`SKIP: ${page} was not written (test_view writes it; the humanoid's needs ../shared/models)`);
  process.exit(77);
}
const nbodiesText = readFileSync(page + '.nbodies', 'utf8').trim();
const expect = existsSync(page + '.expect') ? JSON.parse(readFileSync(page + '.expect', 'utf8')) : {};
const chromium = process.env.SOADYN_CHROMIUM || '/usr/bin/chromium';
if (!existsSync(chromium)) {
  console.log(`SKIP: no Chromium at ${chromium} (Debian: apt-get install chromium; or set SOADYN_CHROMIUM)`);
  process.exit(77);
}
const require = createRequire(import.meta.url);
let playwright;
try {
  playwright = require('playwright-core');
} catch (e) {
  console.log(`SKIP: playwright-core not found (NODE_PATH=${process.env.NODE_PATH || ''}): ${e.message}`);
  process.exit(77);
}

const fail = (msg) => { console.error('FAIL: ' + msg); process.exitCode = 1; };
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

// Every column of the plot in turn: each value-axis label starts inside the canvas and a negative
// value's label starts with its minus sign (a narrow margin used to clip it).
async function checkPlotLabels(tab) {
  const ncols = await tab.evaluate(() => document.getElementById('column').options.length);
  let checked = 0, negative = 0;
  for (let c = 0; c < ncols; ++c) {
    await tab.selectOption('#column', String(c));
    for (const t of await tab.evaluate(() => window.soadynView.plotTicks())) {
      ++checked;
      if (t.value < 0) {
        ++negative;
        if (!t.text.startsWith('-')) fail(`plot column ${c}: the label of ${t.value} is '${t.text}'`);
      }
      if (!(t.left >= 0)) fail(`plot column ${c}: the label '${t.text}' starts at x = ${t.left.toFixed(1)}, outside the canvas`);
    }
  }
  console.log(`plot: ${checked} tick labels of ${ncols} columns inside the canvas, ${negative} negative ones signed`);
  // two columns, and the values under the mouse pointer (at the plot's middle): the time and each
  // column's value at the sample there, as the page's data has them
  if (ncols < 2) return;
  await tab.selectOption('#column', ['0', '1']);
  const box = await tab.locator('#plot').boundingBox();
  await tab.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const r = await tab.evaluate(() => window.soadynView.plotReadout());
  const want = await tab.evaluate((f) => {
    const d = JSON.parse(document.getElementById('soadyn-data').textContent), nc = d.columns.length;
    return [d.times[f], d.values[f * nc], d.values[f * nc + 1], d.columns[0], d.columns[1]];
  }, r ? r.frame : 0);
  const shown = r ? r.lines : [];
  const expected = ['t = ' + want[0].toPrecision(6) + ' s', want[3] + ' = ' + want[1].toPrecision(6), want[4] + ' = ' + want[2].toPrecision(6)];
  console.log(`plot readout at frame ${r ? r.frame : '-'}: ${shown.join(', ')}`);
  if (!r || JSON.stringify(shown) !== JSON.stringify(expected)) fail(`the readout shows [${shown}], not [${expected}]`);
  await tab.mouse.move(0, 0);
  await tab.selectOption('#column', '0');
}

async function checkFlex(tab, e) {
  let worst = 0, moved = 0, pixels = 0;
  const scale = Math.max(...e.tip.map((p) => Math.hypot(...p)), 1);
  for (let i = 0; i < e.frames.length; ++i) {
    const nodes = await tab.evaluate(([k, f]) => { window.soadynView.setFrame(f); return window.soadynView.flexNodes(k); }, [e.body, e.frames[i]]);
    if (!nodes) { fail(`body ${e.body} has no drawn nodes`); return; }
    const drawn = nodes[e.node];
    worst = Math.max(worst, dist(drawn, e.tip[i]) / scale);
    moved = Math.max(moved, dist(drawn, e.rigid[i]));
    // on the view: the drawn tip against where the undeformed tip would be, in pixels
    const [a, b] = await tab.evaluate(([p, q]) => [window.soadynView.project(p), window.soadynView.project(q)], [drawn, e.rigid[i]]);
    pixels = Math.max(pixels, Math.hypot(a[0] - b[0], a[1] - b[1]));
  }
  console.log(`flexible body ${e.body}: drawn node ${e.node} vs the kinematics' ${worst.toExponential(2)} (relative), ` +
    `largest deflection drawn ${moved.toFixed(4)} m, ${pixels.toFixed(1)} px on the view`);
  if (!(pixels > 20)) fail(`the deflection shows as ${pixels.toFixed(1)} px on the view: not visible`);
  if (!(worst < 1e-5)) fail(`the drawn node ${e.node} is off the deflected place by ${worst} (relative)`);
  const want = Math.max(...e.tip.map((p, i) => dist(p, e.rigid[i])));
  if (!(Math.abs(moved - want) < 1e-5 * scale)) fail(`the drawn deflection ${moved} is not the simulated ${want}`);
}

async function checkFlexVisual(tab, e) {
  let worst = 0, moved = 0, count = 0;
  for (let i = 0; i < e.frames.length; ++i) {
    const verts = await tab.evaluate(([k, f]) => { window.soadynView.setFrame(f); return window.soadynView.flexVertices(k); }, [e.body, e.frames[i]]);
    const [th, t, x] = [e.theta[i], e.t[i], e.node_rest];
    for (const v of verts || []) {
      if (Math.abs(v.rest[0] - x[0]) > 1e-6) continue;
      const r = [v.rest[0] - x[0], v.rest[1] - x[1], v.rest[2] - x[2]];
      const want = [v.rest[0] + t[0] + th[1] * r[2] - th[2] * r[1], v.rest[1] + t[1] + th[2] * r[0] - th[0] * r[2],
        v.rest[2] + t[2] + th[0] * r[1] - th[1] * r[0]];
      worst = Math.max(worst, dist(v.now, want));
      moved = Math.max(moved, dist(v.now, v.rest));
      ++count;
    }
  }
  console.log(`flexible body ${e.body}: ${count} drawn vertices at the node's station off the beam section's motion by ` +
    `${worst.toExponential(2)} m at most; moved up to ${moved.toFixed(4)} m`);
  if (count < 4) fail(`only ${count} drawn vertices at the node's station`);
  if (!(worst < 1e-5)) fail(`the deformed visual is off the node's motion by ${worst} m`);
  if (!(moved > 0.1)) fail('the deformed visual did not move');
}

async function checkClosures(tab, e, nframes) {
  let gap = 0, off = 0;
  for (const f of [0, Math.floor(nframes / 3), Math.floor((2 * nframes) / 3), nframes - 1]) {
    for (let j = 0; j < e.count; ++j) {
      const [a, b] = await tab.evaluate(([f, j]) => { window.soadynView.setFrame(f); return window.soadynView.closurePoints(j); }, [f, j]);
      gap = Math.max(gap, dist(a, b));
      off = Math.max(off, dist(a, e.at));
    }
  }
  console.log(`closures: the two drawn points ${gap.toExponential(2)} m apart at most, ${off.toExponential(2)} m from where they meet`);
  if (!(gap < 1e-5) || !(off < 1e-5)) fail('a closure\'s drawn points do not meet where they should');
}

async function checkFraming(tab, least, nframes) {
  for (const f of [0, nframes - 1]) {
    const box = await tab.evaluate((f) => { window.soadynView.setFrame(f); return window.soadynView.screenBox(); }, f);
    const h = Math.min(box.bottom, 1) - Math.max(box.top, 0);
    console.log(`frame ${f}: the model spans ${(100 * h).toFixed(1)}% of the view's height (top ${box.top.toFixed(3)}, bottom ${box.bottom.toFixed(3)})`);
    if (!(h >= least)) fail(`frame ${f}: the model spans ${(100 * h).toFixed(1)}% of the view's height, less than ${100 * least}%`);
    if (f === 0 && (box.top < 0 || box.bottom > 1 || box.left < 0 || box.right > 1)) fail('frame 0: the model is cropped');
  }
}

async function checkMeshFiles(tab, want) {
  const got = await tab.evaluate(() => window.soadynView.meshFiles());
  for (const e of await tab.evaluate(() => window.soadynView.meshErrors())) fail('mesh not drawn: ' + e);
  for (const w of want) {
    const g = got.find((m) => m.format === w.format);
    if (!g) { fail(`no ${w.format} mesh drawn`); continue; }
    console.log(`${w.format} mesh ${g.name}: ${g.distinct} distinct vertices, ${g.triangles} triangles, extent ${g.extent.map((x) => x.toFixed(4))}`);
    if (g.distinct !== w.distinct || g.triangles !== w.triangles)
      fail(`${w.format}: ${g.distinct} vertices and ${g.triangles} triangles drawn, the file has ${w.distinct} and ${w.triangles}`);
    if (g.extent.some((x, i) => !(Math.abs(x - w.extent[i]) < 1e-6))) fail(`${w.format}: drawn extent ${g.extent}, want ${w.extent}`);
  }
}
const browser = await playwright.chromium.launch({
  executablePath: chromium,
  // software WebGL: no GPU in CI
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1200, height: 700 } });
  // no network: a page that needed one would fail here
  await context.route(/^(?!file:)/, (route) => { fail('the page asked for ' + route.request().url()); route.abort(); });
  const tab = await context.newPage();
  const errors = [];
  tab.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  tab.on('pageerror', (e) => errors.push('page error: ' + e.message));
  await tab.goto(pathToFileURL(page).href);
  await tab.waitForFunction(() => window.soadynView !== undefined, null, { timeout: 30000 });
  await tab.evaluate(() => window.soadynView.ready());
  const nbodies = Number(nbodiesText);
  const info = await tab.evaluate(() => ({
    nbodies: window.soadynView.nbodies, objects: window.soadynView.bodyObjectCount(),
    frames: window.soadynView.nframes, meshes: window.soadynView.meshCount(),
  }));
  console.log(`page: ${info.nbodies} bodies, ${info.objects} body objects in the scene, ${info.meshes} meshes, ${info.frames} frames`);
  if (info.nbodies !== nbodies) fail(`the page has ${info.nbodies} bodies, the model ${nbodies}`);
  if (info.objects !== nbodies) fail(`the scene has ${info.objects} body objects, the model ${nbodies} bodies`);
  if (info.meshes < nbodies) fail(`only ${info.meshes} meshes drawn for ${nbodies} bodies`);
  await tab.evaluate(() => window.soadynView.pause());
  if (info.frames > 1) {
    // move the slider as a user does: set its value and send the input event
    const poses = async () => tab.evaluate(() => Array.from({ length: window.soadynView.nbodies }, (_, k) => window.soadynView.pose(k)));
    await tab.evaluate(() => { const s = document.getElementById('slider'); s.value = '0'; s.dispatchEvent(new Event('input')); });
    const before = await poses();
    const target = Math.floor((info.frames - 1) / 2);
    await tab.evaluate((i) => { const s = document.getElementById('slider'); s.value = String(i); s.dispatchEvent(new Event('input')); }, target);
    const after = await poses();
    const frame = await tab.evaluate(() => window.soadynView.frame());
    if (frame !== target) fail(`the slider moved to ${target}, the page shows frame ${frame}`);
    let moved = 0;
    for (let k = 0; k < before.length; ++k) moved = Math.max(moved, ...before[k].map((x, i) => Math.abs(x - after[k][i])));
    console.log(`slider 0 -> ${target}: largest change of a body's placement ${moved.toExponential(3)}`);
    if (!(moved > 1e-3)) fail('moving the slider did not change the pose');
    // the plot and the toggles respond without errors
    await tab.selectOption('#column', { index: 1 });
    await tab.check('#frames');
    await tab.check('#inertia');
    await tab.uncheck('#inertia');
    await tab.uncheck('#frames'); // the screenshot shows the page as it opens
  }
  await checkPlotLabels(tab);
  if (expect.flex) await checkFlex(tab, expect.flex);
  if (expect.flex_visual) await checkFlexVisual(tab, expect.flex_visual);
  if (expect.closures) await checkClosures(tab, expect.closures, info.frames);
  if (expect.min_height) await checkFraming(tab, expect.min_height, info.frames);
  if (expect.mesh_files) await checkMeshFiles(tab, expect.mesh_files);
  await tab.evaluate(() => window.soadynView.setFrame(0));
  await tab.waitForTimeout(300);
  await tab.screenshot({ path: shot });
  console.log('screenshot: ' + shot);
  for (const e of errors) fail(e);
} finally {
  await browser.close();
}
