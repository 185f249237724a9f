// The viewer's figures in docs/ (docs/viewer.md shows them): each a run of `soadyn simulate --html`
// opened in headless Chromium (Debian's) through playwright-core, at a chosen frame, saved as PNG.
// usage: NODE_PATH=<build>/viewer/node_modules node viewer/tools/screenshots.mjs SOADYN OUT_DIR [SHARED_MODELS]
//   SOADYN: the CLI (<build>/cli/soadyn); the humanoid's figure needs the shared models' folder.
//   SOADYN_FIGURES=name,..: only those figures (default: all).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');
const [soadyn, outDir, shared] = process.argv.slice(2);
const models = resolve(dirname(fileURLToPath(import.meta.url)), '../../models');
const work = mkdtempSync(join(tmpdir(), 'soadyn-figures-'));

// name, model, simulate's options, the frame shown (a fraction of the run), the page's toggles, the
// plot's columns (by name; default the first), wheel steps zooming out (default none)
const figures = [
  { name: 'viewer_four_bar', model: `${models}/four_bar.urdf`, args: ['--duration', '2', '--u0', 'crank_joint=6'],
    at: 0.33, check: ['#skeleton'] },
  { name: 'viewer_spacecraft', model: `${models}/spacecraft.urdf`,
    args: ['--duration', '4', '--q0', 'array_right.eta2=1.5,array_left.eta2=1.5,boom.eta1=1'], at: 0 },
  { name: 'deployment_swing', model: `${models}/spacecraft_deploy.urdf`,
    args: ['--duration', '20', '--dt', '0.0025'], at: 0.09, check: ['#skeleton'],
    plot: ['crank_hinge', 'arm_hinge'], zoom: 3 },
  { name: 'viewer_meshed_arm', model: `${models}/meshed_arm/meshed_arm.urdf`,
    args: ['--duration', '3', '--q0', 'shoulder_pitch=0.9,elbow=0.6'], at: 0 },
];
if (shared && existsSync(`${shared}/humanoid_mjcf/humanoid.xml`))
  figures.push({ name: 'viewer_humanoid', model: `${shared}/humanoid_mjcf/humanoid.xml`,
    args: ['--duration', '2', '--u0', 'root.wx=1.5,root.wy=-1,root.wz=0.5,root.vz=3', '--every', '10'], at: 1 });

const only = process.env.SOADYN_FIGURES ? process.env.SOADYN_FIGURES.split(',') : null;
const chosen = figures.filter((f) => !only || only.includes(f.name));

const browser = await chromium.launch({
  executablePath: process.env.SOADYN_CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
});
try {
  for (const f of chosen) {
    const html = join(work, f.name + '.html');
    execFileSync(soadyn, ['simulate', f.model, ...f.args, '--html', html], { stdio: ['ignore', 'ignore', 'inherit'] });
    const tab = await (await browser.newContext({ viewport: { width: 1200, height: 700 } })).newPage();
    const errors = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    await tab.goto(pathToFileURL(html).href);
    await tab.waitForFunction(() => window.soadynView !== undefined);
    await tab.evaluate(() => window.soadynView.ready());
    for (const box of f.check || []) await tab.check(box);
    if (f.plot) await tab.selectOption('#column', f.plot.map((label) => ({ label })));
    for (let i = 0; i < (f.zoom || 0); ++i) {
      await tab.mouse.move(380, 350); // over the scene
      await tab.mouse.wheel(0, 100);
    }
    await tab.evaluate((at) => window.soadynView.setFrame(Math.round(at * (window.soadynView.nframes - 1))), f.at);
    await tab.waitForTimeout(300);
    const png = join(outDir, f.name + '.png');
    await tab.screenshot({ path: png });
    if (errors.length) throw new Error(`${f.name}: ${errors.join('; ')}`);
    console.log('wrote ' + png);
  }
} finally {
  await browser.close();
}
