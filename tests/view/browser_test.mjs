// The viewer in a real browser (issue #13): headless Chromium (Debian's /usr/bin/chromium) driven by
// playwright-core (pinned in viewer/package-lock.json) opens a page written by soadyn and checks that
// it loads without console errors or page errors, that the scene has one object per body, that moving
// the time slider changes the pose, and saves a screenshot.
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
  await tab.waitForTimeout(300);
  await tab.screenshot({ path: shot });
  console.log('screenshot: ' + shot);
  for (const e of errors) fail(e);
} finally {
  await browser.close();
}
