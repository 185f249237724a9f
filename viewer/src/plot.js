// The plot beside the scene: one or several trajectory columns against time on a 2D canvas, a cursor
// at the frame shown, and the values under the mouse pointer. The columns are the CSV's (coordinates,
// speeds u.*, energies) at the page's frames. The left margin is as wide as the widest tick label
// (measured), so that a label such as "-0.006649" keeps its sign.
const COLOURS = ['#1f5fbf', '#c0392b', '#2e8b57', '#8e44ad', '#d35400', '#16a085'];
const FONT = '11px sans-serif';

// tick labels: exponent form for very small or large values
function tickLabel(y) {
  return y !== 0 && (Math.abs(y) < 1e-3 || Math.abs(y) >= 1e5) ? y.toExponential(2) : y.toPrecision(4);
}

export class Plot {
  constructor(canvas, data) {
    this.canvas = canvas;
    this.data = data;
    this.columns = [0];
    this.frame = 0;
    this.pointer = null; // the frame under the mouse pointer, or null
    this.readout = []; // the lines it shows there
    this.ticks = []; // what the last draw wrote on the value axis: { text, left } (for tests)
    canvas.addEventListener('mousemove', (e) => {
      const r = canvas.getBoundingClientRect();
      this.pointer = this.frameAt(((e.clientX - r.left) * canvas.width) / r.width);
      this.draw();
    });
    canvas.addEventListener('mouseleave', () => { this.pointer = null; this.draw(); });
  }

  setColumns(cols) { this.columns = cols.length ? cols : [0]; this.draw(); }
  setFrame(i) { this.frame = i; this.draw(); }

  // the frame whose time is nearest the canvas abscissa x
  frameAt(x) {
    const t = this.data.times, n = t.length;
    if (!this.layout || n === 0) return null;
    const { L, W, R, t0, t1 } = this.layout;
    const time = t0 + ((x - L) / (W - L - R)) * (t1 - t0);
    let best = 0;
    for (let i = 1; i < n; ++i) if (Math.abs(t[i] - time) < Math.abs(t[best] - time)) best = i;
    return best;
  }

  value(i, c) { return this.data.values[i * this.data.columns.length + c]; }

  draw() {
    const cv = this.canvas, ctx = cv.getContext('2d');
    const d = this.data, t = d.times, n = t.length, nc = d.columns.length;
    const W = cv.width, H = cv.height, R = 10, T = 12, B = 28 + 14 * Math.max(0, this.columns.length - 1);
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
    this.ticks = [];
    if (nc === 0 || n === 0) return;
    let lo = Infinity, hi = -Infinity;
    for (const c of this.columns)
      for (let i = 0; i < n; ++i) {
        const y = this.value(i, c);
        if (y < lo) lo = y;
        if (y > hi) hi = y;
      }
    if (!(hi > lo)) { const m = Math.abs(lo) * 0.05 || 1; lo -= m; hi += m; }
    ctx.font = FONT;
    const ticks = [lo, (lo + hi) / 2, hi].map((y) => ({ y, text: tickLabel(y) }));
    const L = 8 + Math.ceil(Math.max(...ticks.map((k) => ctx.measureText(k.text).width)));
    const t0 = t[0], t1 = n > 1 && t[n - 1] > t0 ? t[n - 1] : t0 + 1;
    this.layout = { L, W, R, t0, t1 };
    const X = (x) => L + ((x - t0) / (t1 - t0)) * (W - L - R);
    const Y = (y) => T + (1 - (y - lo) / (hi - lo)) * (H - T - B);
    ctx.strokeStyle = '#c8ccd2';
    ctx.lineWidth = 1;
    ctx.strokeRect(L, T, W - L - R, H - T - B);
    ctx.fillStyle = '#333';
    ctx.textAlign = 'right';
    for (const k of ticks) {
      ctx.fillText(k.text, L - 4, Y(k.y) + 4);
      this.ticks.push({ text: k.text, value: k.y, left: L - 4 - ctx.measureText(k.text).width });
    }
    ctx.textAlign = 'center';
    ctx.fillText(t0.toPrecision(3) + ' s', L, H - B + 18);
    ctx.fillText(t1.toPrecision(3) + ' s', W - R - 10, H - B + 18);
    this.columns.forEach((c, j) => {
      const colour = COLOURS[j % COLOURS.length];
      ctx.fillStyle = colour;
      ctx.fillText(d.columns[c], (L + W - R) / 2, H - B + 18 + 14 * j);
      ctx.strokeStyle = colour;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      for (let i = 0; i < n; ++i) {
        const x = X(t[i]), y = Y(this.value(i, c));
        if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      }
      ctx.stroke();
    });
    ctx.strokeStyle = '#c0392b';
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(X(t[this.frame]), T);
    ctx.lineTo(X(t[this.frame]), H - B);
    ctx.stroke();
    if (this.pointer !== null) this.drawReadout(ctx, X, T, H - B, this.pointer);
  }

  // the time and each column's value at frame i, beside a dashed line there
  drawReadout(ctx, X, T, bottom, i) {
    const x = X(this.data.times[i]);
    ctx.save();
    ctx.setLineDash([3, 3]);
    ctx.strokeStyle = '#555';
    ctx.beginPath();
    ctx.moveTo(x, T);
    ctx.lineTo(x, bottom);
    ctx.stroke();
    ctx.restore();
    const lines = ['t = ' + this.data.times[i].toPrecision(6) + ' s',
      ...this.columns.map((c) => this.data.columns[c] + ' = ' + this.value(i, c).toPrecision(6))];
    ctx.font = FONT;
    const w = 8 + Math.max(...lines.map((s) => ctx.measureText(s).width));
    const left = x + w + 6 < this.canvas.width ? x + 6 : x - 6 - w;
    ctx.fillStyle = 'rgba(255,255,255,0.9)';
    ctx.fillRect(left, T + 2, w, 14 * lines.length + 4);
    ctx.textAlign = 'left';
    lines.forEach((s, j) => {
      ctx.fillStyle = j === 0 ? '#333' : COLOURS[(j - 1) % COLOURS.length];
      ctx.fillText(s, left + 4, T + 15 + 14 * j);
    });
    this.readout = lines;
  }
}
