// The plot beside the scene: one trajectory column against time on a 2D canvas, with a cursor at
// the frame shown. The columns are the CSV's (coordinates, speeds u.*, energies) at the page's frames.
export class Plot {
  constructor(canvas, data) {
    this.canvas = canvas;
    this.data = data;
    this.column = 0;
    this.frame = 0;
  }

  setColumn(c) { this.column = c; this.draw(); }
  setFrame(i) { this.frame = i; this.draw(); }

  draw() {
    const cv = this.canvas, ctx = cv.getContext('2d');
    const d = this.data, t = d.times, n = t.length, nc = d.columns.length;
    const W = cv.width, H = cv.height, L = 56, R = 10, T = 12, B = 28;
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, H);
    if (nc === 0 || n === 0) return;
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < n; ++i) {
      const y = d.values[i * nc + this.column];
      if (y < lo) lo = y;
      if (y > hi) hi = y;
    }
    if (!(hi > lo)) { const m = Math.abs(lo) * 0.05 || 1; lo -= m; hi += m; }
    const t0 = t[0], t1 = n > 1 && t[n - 1] > t0 ? t[n - 1] : t0 + 1;
    const X = (x) => L + ((x - t0) / (t1 - t0)) * (W - L - R);
    const Y = (y) => T + (1 - (y - lo) / (hi - lo)) * (H - T - B);
    ctx.strokeStyle = '#c8ccd2';
    ctx.lineWidth = 1;
    ctx.strokeRect(L, T, W - L - R, H - T - B);
    ctx.fillStyle = '#333';
    ctx.font = '11px sans-serif';
    ctx.textAlign = 'right';
    // tick labels that fit the margin: exponent form for very small or large values
    const label = (y) => (y !== 0 && (Math.abs(y) < 1e-3 || Math.abs(y) >= 1e5) ? y.toExponential(2) : y.toPrecision(4));
    for (const y of [lo, (lo + hi) / 2, hi]) ctx.fillText(label(y), L - 4, Y(y) + 4);
    ctx.textAlign = 'center';
    ctx.fillText(t0.toPrecision(3) + ' s', L, H - 10);
    ctx.fillText(t1.toPrecision(3) + ' s', W - R - 10, H - 10);
    ctx.fillText(d.columns[this.column], (L + W - R) / 2, H - 10);
    ctx.strokeStyle = '#1f5fbf';
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    for (let i = 0; i < n; ++i) {
      const x = X(t[i]), y = Y(d.values[i * nc + this.column]);
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    }
    ctx.stroke();
    ctx.strokeStyle = '#c0392b';
    ctx.beginPath();
    ctx.moveTo(X(t[this.frame]), T);
    ctx.lineTo(X(t[this.frame]), H - B);
    ctx.stroke();
  }
}
