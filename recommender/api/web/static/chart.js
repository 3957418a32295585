// Hand-drawn SVG charts: cost vs time of every feasible offer (log axes, Pareto frontier,
// picks ringed), and each pick's memory per GPU. No library; no inline styles (strict CSP).
"use strict";

(function () {
  const NS = "http://www.w3.org/2000/svg";
  // Drawn at the container's width (a phone gets bigger text than a scaled-down chart).
  const MAX_W = 760, MIN_W = 320;
  let W = MAX_W, H = 430;
  const M = { left: 78, right: 20, top: 18, bottom: 58 };

  function size(container, height) {
    W = Math.round(Math.max(MIN_W, Math.min(MAX_W, container.clientWidth || MAX_W)));
    H = height(W);
  }
  // What a plan's memory_gb names (training: state and activations; serving: weights and KV
  // cache); any other key is drawn as "other".
  const COMPONENTS = ["state", "weights", "gradients", "optimizer", "activations", "kv_cache"];

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, String(v)));
    if (parent) parent.appendChild(node);
    return node;
  }

  function text(parent, x, y, content, attrs) {
    const t = el("text", Object.assign({ x, y }, attrs || {}), parent);
    t.textContent = content;
    return t;
  }

  function money(usd) {
    if (usd == null || !Number.isFinite(usd)) return "–";
    if (usd >= 100) return "$" + Math.round(usd).toLocaleString("en-US");
    if (usd >= 1) return "$" + usd.toFixed(2);
    return "$" + usd.toPrecision(2);
  }

  function duration(seconds) {
    if (seconds == null || !Number.isFinite(seconds)) return "–";
    if (seconds < 1) return (seconds * 1e3).toPrecision(3).replace(/\.?0+$/, "") + " ms";
    if (seconds < 120) return seconds.toPrecision(3).replace(/\.?0+$/, "") + " s";
    if (seconds < 7200) return (seconds / 60).toPrecision(3).replace(/\.?0+$/, "") + " min";
    if (seconds < 172800) return (seconds / 3600).toPrecision(3).replace(/\.?0+$/, "") + " h";
    return (seconds / 86400).toPrecision(3).replace(/\.?0+$/, "") + " d";
  }

  function logDomain(values) {
    const pos = values.filter((v) => v > 0 && Number.isFinite(v));
    if (!pos.length) return [0, 1];
    let lo = Math.log10(Math.min(...pos)), hi = Math.log10(Math.max(...pos));
    if (hi - lo < 0.3) { lo -= 0.5; hi += 0.5; }
    const pad = (hi - lo) * 0.06;
    return [lo - pad, hi + pad];
  }

  const TICK_SPACING_PX = 90;  // at least this much room per tick label
  // Round durations in seconds: ms, s, min, h, days (what a reader names a time by).
  const TIME_STEPS = [1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30,
    60, 120, 300, 600, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400,
    5 * 86400, 10 * 86400, 30 * 86400, 100 * 86400, 365 * 86400];

  function thin(values) {
    const most = Math.max(3, Math.floor((W - M.left - M.right) / TICK_SPACING_PX));
    const every = Math.ceil(values.length / most);
    return values.filter((_, i) => i % every === 0);
  }

  // Tick values inside a log10 domain: decades, plus 2 and 5 when the range is short.
  function logTicks([lo, hi]) {
    const steps = hi - lo < 2.5 ? [1, 2, 5] : [1];
    const out = [];
    for (let e = Math.floor(lo); e <= Math.ceil(hi); e++) {
      steps.forEach((s) => {
        const v = s * Math.pow(10, e);
        const l = Math.log10(v);
        if (l >= lo && l <= hi) out.push(v);
      });
    }
    return thin(out);
  }

  function timeTicks([lo, hi]) {
    return thin(TIME_STEPS.filter((v) => Math.log10(v) >= lo && Math.log10(v) <= hi));
  }

  function offerText(p) {
    const where = p.region ? `${p.cloud} ${p.region}` : p.cloud;
    return `${p.rank ? "#" + p.rank + " " : ""}${p.instance_type} (${p.gpus} × ` +
      `${p.accelerator}), ${where}, ${p.pricing} ${money(p.price_per_hour)}/h: ` +
      `${money(p.cost_usd)}, ${duration(p.time_s)}, ${p.bottleneck}-bound` +
      (p.pareto_optimal ? ", on the frontier" : "");
  }

  function axes(svg, xd, yd, sx, sy, labels) {
    const grid = el("g", { class: "grid" }, svg);
    const axis = el("g", { class: "axis" }, svg);
    el("line", { x1: M.left, y1: H - M.bottom, x2: W - M.right, y2: H - M.bottom }, axis);
    el("line", { x1: M.left, y1: M.top, x2: M.left, y2: H - M.bottom }, axis);
    timeTicks(xd).filter((v) => sx(v) < W - M.right - 14).forEach((v) => {  // label fits
      const x = sx(v);
      el("line", { x1: x, y1: M.top, x2: x, y2: H - M.bottom }, grid);
      el("line", { x1: x, y1: H - M.bottom, x2: x, y2: H - M.bottom + 5 }, axis);
      text(axis, x, H - M.bottom + 18, duration(v), { "text-anchor": "middle" });
    });
    logTicks(yd).forEach((v) => {
      const y = sy(v);
      el("line", { x1: M.left, y1: y, x2: W - M.right, y2: y }, grid);
      el("line", { x1: M.left - 5, y1: y, x2: M.left, y2: y }, axis);
      text(axis, M.left - 8, y + 4, money(v), { "text-anchor": "end" });
    });
    text(svg, (M.left + W - M.right) / 2, H - 12, labels.time + " (log)",
      { "text-anchor": "middle" });
    text(svg, 14, (M.top + H - M.bottom) / 2, labels.cost + " (log)",
      { "text-anchor": "middle", transform: `rotate(-90 14 ${(M.top + H - M.bottom) / 2})` });
  }

  function legend(svg) {
    const g = el("g", { class: "legend", transform: `translate(${M.left + 10} ${M.top + 6})` },
      svg);
    const room = W - M.left - M.right - 20;
    let x = 0, y = 0;
    [["on-demand", "rect"], ["spot", "rect"], ["Pareto frontier", "line"], ["pick", "circle"]]
      .forEach(([label, shape]) => {
        const width = 26 + label.length * 7;
        if (x + width > room) { x = 0; y += 16; }
        if (shape === "rect") el("rect", { class: label, x, y, width: 10, height: 10 }, g);
        if (shape === "line") {
          el("line", { class: "frontier", x1: x, y1: y + 5, x2: x + 16, y2: y + 5 }, g);
        }
        if (shape === "circle") el("circle", { class: "pick", cx: x + 5, cy: y + 5, r: 6 }, g);
        text(g, x + (shape === "line" ? 20 : 14), y + 9, label);
        x += width;
      });
  }

  // points: [{cost_usd, time_s, pricing, rank, pareto_optimal, ...}]
  function scatter(container, data, onSelect) {
    container.textContent = "";
    size(container, (w) => (w < 500 ? 340 : 430));
    const points = data.points.filter((p) => p.cost_usd > 0 && p.time_s > 0);
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "group",
      "aria-label": `${points.length} offers: ${data.cost_label} against ${data.time_label}` },
    container);
    if (!points.length) {
      text(svg, W / 2, H / 2, "no feasible offer to plot", { "text-anchor": "middle" });
      return svg;
    }
    const xd = logDomain(points.map((p) => p.time_s));
    const yd = logDomain(points.map((p) => p.cost_usd));
    const sx = (v) => M.left + (Math.log10(v) - xd[0]) / (xd[1] - xd[0]) * (W - M.left - M.right);
    const sy = (v) => H - M.bottom - (Math.log10(v) - yd[0]) / (yd[1] - yd[0]) *
      (H - M.top - M.bottom);
    axes(svg, xd, yd, sx, sy, { cost: data.cost_label, time: data.time_label });
    let selected = null;
    const select = (p, node) => {
      if (selected) selected.classList.remove("selected");
      selected = node;
      if (node) node.classList.add("selected");
      onSelect(p);
    };
    const dots = el("g", { class: "points" }, svg);
    points.forEach((p) => {
      const c = el("circle", { class: `pt ${p.pricing === "spot" ? "spot" : "on-demand"}`,
        cx: sx(p.time_s).toFixed(1), cy: sy(p.cost_usd).toFixed(1), r: 3.5 }, dots);
      el("title", {}, c).textContent = offerText(p);
      c.addEventListener("mouseenter", () => onSelect(p));
      c.addEventListener("click", () => select(p, c));
    });
    const front = points.filter((p) => p.pareto_optimal).sort((a, b) => a.time_s - b.time_s);
    if (front.length > 1) {
      el("polyline", { class: "frontier", points: front.map((p) =>
        `${sx(p.time_s).toFixed(1)},${sy(p.cost_usd).toFixed(1)}`).join(" ") }, svg);
    }
    const picks = el("g", { class: "picks" }, svg);
    points.filter((p) => p.rank).sort((a, b) => b.rank - a.rank).forEach((p) => {
      const x = sx(p.time_s), y = sy(p.cost_usd);
      const ring = el("circle", { class: "pick", cx: x.toFixed(1), cy: y.toFixed(1), r: 8,
        tabindex: 0, role: "button", "aria-label": "Pick " + offerText(p) }, picks);
      el("title", {}, ring).textContent = offerText(p);
      text(picks, x + 10, y - 8, String(p.rank), { class: "pick-label" });
      ring.addEventListener("click", () => select(p, ring));
      ring.addEventListener("focus", () => onSelect(p));
      ring.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); select(p, ring); }
      });
    });
    legend(svg);
    return svg;
  }

  function pickLabel(pick) {
    return `#${pick.rank} ${pick.gpus} × ${pick.accelerator}`;
  }

  // One horizontal stacked bar per pick: what fills a GPU, against the usable memory.
  function memory(container, picks) {
    container.textContent = "";
    const rows = picks.filter((p) => p.memory);
    if (!rows.length) {
      const p = document.createElement("p");
      p.textContent = "This answer has no memory breakdown.";
      container.appendChild(p);
      return null;
    }
    size(container, () => 0);
    const narrow = W < 500;
    // A phone puts each label above its bar; a wide screen beside it.
    const rowH = narrow ? 44 : 30, top = narrow ? 44 : 30, left = narrow ? 4 : 210;
    const right = narrow ? 110 : 120, barY = narrow ? 16 : 0;
    const h = top + rows.length * rowH + 10;
    const max = Math.max(...rows.map((p) => Math.max(p.memory.available_gb, p.memory.needed_gb)));
    const sx = (gb) => (gb / max) * (W - left - right);
    const svg = el("svg", { viewBox: `0 0 ${W} ${h}`, role: "img",
      "aria-label": "Memory per GPU of each pick" }, container);
    const g = el("g", { class: "legend" }, svg);
    let lx = narrow ? 4 : left, ly = 4;
    const present = new Set(rows.flatMap((p) => Object.keys(p.memory.components_gb || {})));
    const drawn = COMPONENTS.filter((c) => present.has(c));
    const unnamed = rows.some((p) => p.memory.needed_gb > 0.01 +
      Object.values(p.memory.components_gb || {}).reduce((a, b) => a + b, 0));
    if (unnamed || [...present].some((c) => !COMPONENTS.includes(c))) drawn.push("other");
    [...drawn, "usable"].forEach((name) => {
      const width = 22 + name.length * 7;
      if (lx + width > W) { lx = 4; ly += 18; }
      el("rect", { class: name === "usable" ? "room" : `bar ${name}`, x: lx, y: ly,
        width: 10, height: 10 }, g);
      text(g, lx + 14, ly + 9, name.replace("_", " "));
      lx += width;
    });
    rows.forEach((pick, i) => {
      const y = top + i * rowH + barY;
      const m = pick.memory;
      if (narrow) text(svg, left, y - 5, pickLabel(pick));
      else text(svg, left - 8, y + 15, pickLabel(pick), { "text-anchor": "end" });
      let x = left;
      const parts = Object.entries(m.components_gb || {});
      const known = parts.reduce((s, [, gb]) => s + gb, 0);
      if (m.needed_gb > known + 0.01) parts.push(["other", m.needed_gb - known]);
      parts.forEach(([name, gb]) => {
        const cls = COMPONENTS.includes(name) ? name : "other";
        const r = el("rect", { class: `bar ${cls}`, x: x.toFixed(1), y, height: 20,
          width: Math.max(sx(gb), 0.5).toFixed(1) }, svg);
        el("title", {}, r).textContent = `${pickLabel(pick)}: ${name.replace("_", " ")} ` +
          `${gb.toFixed(2)} GB`;
        x += sx(gb);
      });
      el("rect", { class: "room", x: left, y: y - 2, height: 24,
        width: sx(m.available_gb).toFixed(1) }, svg);
      text(svg, left + Math.max(sx(m.available_gb), x - left) + 6, y + 15,
        `${m.needed_gb.toFixed(1)} / ${m.available_gb.toFixed(1)} GB`);
    });
    return svg;
  }

  function count(n) {
    const units = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "k"]];
    const [size, suffix] = units.find(([u]) => n >= u) || [1, ""];
    return (n / size).toPrecision(3).replace(/\.?0+$/, "") + suffix;
  }

  window.RecChart = { scatter, memory, money, duration, offerText, count };
})();
