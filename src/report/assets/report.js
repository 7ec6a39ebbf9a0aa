// Draws report.html's charts with Chart.js (inlined before this script).
// Input: the JSON in #gpuscope-data (html_report.cpp writes it):
//   {runs: [{label, reference}], charts: [{id, anchor, x: {name, unit, log}, y: {...},
//    traces: [{run, points: [[x, y, lo, hi], ...]}],
//    markers: [{run, axis: "x"|"y", value, low, high, label}],
//    guides: [{run, label, points: [[x, y], ...]}] (dashed model curves, optional)}]}
// Contract with the real-browser test: when done, <body> carries data-charts
// (how many), data-drawn (how many drew), data-errors (script errors seen,
// counted by the handler in <head>), data-first-ms (the first charts),
// data-render-ms (all of them) and data-ready="1"; every
// canvas carries data-drawn="1", and data-painted (non-blank pixels) and
// data-label-overlaps (pairs of tick labels that overlap) when the page is
// opened at #selftest. The graphics section's pictures (img.gpuscope-picture,
// inline PNG) are decoded by the browser: <body> carries data-pictures (how
// many) and, once all have settled, data-pictures-decoded (how many decoded
// to their stated width and height).
(function () {
  'use strict';
  const t0 = performance.now();
  const data = JSON.parse(document.getElementById('gpuscope-data').textContent);
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf'];
  const color = (run) => palette[run % palette.length];
  const alpha = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, '0');

  // Binary prefixes for bytes, three figures otherwise: what the text shows.
  function quantity(v, unit) {
    if (unit === 'B') {
      const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
      let i = 0;
      while (Math.abs(v) >= 1024 && i + 1 < units.length) { v /= 1024; i++; }
      return (Number.isInteger(v) ? v : v.toPrecision(3)) + ' ' + units[i];
    }
    const s = Math.abs(v) >= 1000 || Number.isInteger(v) ? Math.round(v).toString() : v.toPrecision(3);
    return unit ? s + ' ' + unit : s;
  }

  // Log axes get ticks evenly spaced on the axis, at most about ten, so that
  // autoSkip (which assumes even spacing) keeps their labels apart: powers of
  // two over bytes and over spans within 2^12 (vector widths 1..16), else
  // 1-2-5 per decade, or whole decades where those would be too many.
  function logTicks(unit) {
    return (axis) => {
      if (!(axis.min > 0) || !(axis.max > axis.min)) return;
      const ticks = [];
      if (unit === 'B' || axis.max / axis.min <= 4096) {
        const lo = Math.ceil(Math.log2(axis.min) - 1e-9), hi = Math.floor(Math.log2(axis.max) + 1e-9);
        const step = Math.max(1, Math.ceil((hi - lo + 1) / 10));
        for (let e = lo; e <= hi; e += step) ticks.push({value: Math.pow(2, e)});
      } else {
        const lo = Math.floor(Math.log10(axis.min)), hi = Math.ceil(Math.log10(axis.max));
        const mantissas = hi - lo <= 3 ? [1, 2, 5] : [1];
        const step = Math.max(1, Math.ceil((hi - lo + 1) / 10));
        for (let e = lo; e <= hi; e += step)
          for (const m of mantissas) {
            const v = m * Math.pow(10, e);
            if (v >= axis.min * (1 - 1e-9) && v <= axis.max * (1 + 1e-9)) ticks.push({value: v});
          }
      }
      if (ticks.length >= 2) axis.ticks = ticks;
    };
  }

  // Every axis is titled with its quantity and unit. A unitless one counts,
  // unless its values are all 0 and 1 (a yes/no answer) or its name already
  // explains them in brackets.
  function axisTitle(ax, values) {
    if (ax.unit) return ax.name + ' (' + ax.unit + ')';
    if (ax.name.includes('(')) return ax.name;
    if (values.length && values.every((v) => v === 0 || v === 1)) return ax.name + ' (1 yes, 0 no)';
    return ax.name + ' (count)';
  }

  function scale(ax, values) {
    const s = {
      type: ax.log ? 'logarithmic' : 'linear',
      title: {display: true, text: axisTitle(ax, values || [])},
      ticks: {callback: (v) => quantity(Number(v), ax.unit), autoSkip: true, autoSkipPadding: 6, maxRotation: 0},
    };
    if (ax.log) s.afterBuildTicks = logTicks(ax.unit);
    return s;
  }

  // How many pairs of tick labels overlap, over every axis of a chart: the
  // boxes Chart.js lays its labels out in (position, alignment, measured
  // text). Labels are drawn on the canvas, not in the DOM: the browser test
  // reads this count from data-label-overlaps.
  function labelOverlaps(chart) {
    const ctx = chart.ctx;
    let overlaps = 0;
    for (const sc of Object.values(chart.scales)) {
      const items = sc._labelItems || (sc._computeLabelItems ? sc._computeLabelItems(chart.chartArea) : []);
      const boxes = [];
      for (const it of items) {
        const lines = Array.isArray(it.label) ? it.label : [it.label];
        ctx.save();
        ctx.font = it.font.string;
        const w = Math.max(...lines.map((l) => ctx.measureText(String(l)).width));
        ctx.restore();
        const h = it.font.lineHeight * lines.length;
        const [x, y0] = it.translation;
        const y = y0 + (it.textOffset || 0);
        const left = it.textAlign === 'center' ? x - w / 2 : (it.textAlign === 'right' || it.textAlign === 'end') ? x - w : x;
        const top = it.textBaseline === 'middle' ? y - h / 2 : it.textBaseline === 'bottom' ? y - h : y;
        boxes.push({left, right: left + w, top, bottom: top + h});
      }
      for (let i = 0; i < boxes.length; ++i)
        for (let j = i + 1; j < boxes.length; ++j) {
          const a = boxes[i], b = boxes[j];
          if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
            overlaps++;
        }
    }
    return overlaps;
  }

  // Levels (y) and knees (x) read off this curve: a line at the value and a
  // light band over the interval, labelled with the finding.
  const markerPlugin = {
    id: 'gpuscopeMarkers',
    afterDatasetsDraw(chart, args, opts) {
      const {ctx, chartArea: area, scales} = chart;
      ctx.save();
      ctx.beginPath();
      ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
      ctx.clip();
      ctx.font = '11px sans-serif';
      // Labels are staggered so that neighbours do not print over each other:
      // knees along the top (a reference's along the bottom), levels along
      // the left (a reference's along the right).
      const slots = {};
      const nextSlot = (key) => (slots[key] = (slots[key] || 0) + 1) - 1;
      for (const m of opts.markers || []) {
        const sc = m.axis === 'x' ? scales.x : scales.y;
        const at = (v) => sc.getPixelForValue(v);
        const c = color(m.run);
        const ref = data.runs[m.run].reference;
        if (m.low !== null && m.high !== null && m.high > m.low) {
          ctx.fillStyle = alpha(c, 0.10);
          if (m.axis === 'x') ctx.fillRect(at(m.low), area.top, at(m.high) - at(m.low), area.bottom - area.top);
          else ctx.fillRect(area.left, at(m.high), area.right - area.left, at(m.low) - at(m.high));
        }
        ctx.strokeStyle = c;
        ctx.lineWidth = 1.5;
        ctx.setLineDash(ref ? [2, 3] : [6, 4]);
        ctx.beginPath();
        const p = at(m.value);
        if (m.axis === 'x') { ctx.moveTo(p, area.top); ctx.lineTo(p, area.bottom); }
        else { ctx.moveTo(area.left, p); ctx.lineTo(area.right, p); }
        ctx.stroke();
        ctx.fillStyle = c;
        const k = nextSlot(m.axis + ref);
        if (m.axis === 'x') {
          ctx.textAlign = 'left';
          ctx.fillText(m.label, p + 3, ref ? area.bottom - 4 - 12 * (k % 3) : area.top + 12 + 12 * (k % 3));
        } else {
          ctx.textAlign = ref ? 'right' : 'left';
          ctx.fillText(m.label, ref ? area.right - 4 - 90 * (k % 2) : area.left + 4 + 90 * (k % 2), p - 3);
        }
      }
      ctx.restore();
    },
  };

  // Counting painted pixels reads every canvas back (a third of the page's
  // drawing time with 125 charts): only the browser test asks for it, by
  // opening the page at #selftest.
  const selfTest = window.location.hash === '#selftest';
  let drawn = 0;
  const drawnPlugin = {
    id: 'gpuscopeDrawn',
    afterDraw(chart) {
      const canvas = chart.canvas;
      if (canvas.dataset.drawn) return;
      canvas.dataset.drawn = '1';
      if (selfTest) checkDrawing(chart);
      drawn++;
    },
  };

  // #selftest: non-blank pixels and overlapping tick labels, on the canvas.
  function checkDrawing(chart) {
    const canvas = chart.canvas;
    const img = chart.ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 3; i < img.length; i += 4) if (img[i] !== 0) painted++;
    canvas.dataset.painted = String(painted);
    canvas.dataset.labelOverlaps = String(labelOverlaps(chart));
  }

  // Printed pages are narrower than the screen: every chart is laid out
  // again for paper and back (Chart.js does not follow print media itself).
  for (const when of ['beforeprint', 'afterprint'])
    window.addEventListener(when, () => Object.values(Chart.instances).forEach((chart) => chart.resize()));

  // What headline.js draws with.
  window.gpuscopeCharts = {palette, color, alpha, quantity, scale, selfTest, checkDrawing};

  function draw(c) {
    const datasets = [];
    for (const t of c.traces) {
      const run = data.runs[t.run];
      const col = color(t.run);
      const pts = t.points.map((p) => ({x: p[0], y: p[1], src: p[4]}));
      if (run.reference) {
        datasets.push({label: run.label + ' (published)', data: pts, showLine: false, pointStyle: 'triangle',
                       pointRadius: 7, borderColor: col, backgroundColor: alpha(col, 0.5)});
        continue;
      }
      datasets.push({label: run.label, data: pts, showLine: true, borderColor: col, backgroundColor: col,
                     borderWidth: 1.5, pointRadius: 2, tension: 0});
      // Sample spread: from the fastest to the slowest sample of each point.
      if (t.points.some((p) => p[2] !== null)) {
        datasets.push({label: '', data: t.points.map((p) => ({x: p[0], y: p[2] === null ? p[1] : p[2]})),
                       showLine: true, pointRadius: 0, borderWidth: 0, fill: false});
        datasets.push({label: '', data: t.points.map((p) => ({x: p[0], y: p[3] === null ? p[1] : p[3]})),
                       showLine: true, pointRadius: 0, borderWidth: 0, fill: '-1',
                       backgroundColor: alpha(col, 0.15)});
      }
    }
    for (const g of c.guides || []) {
      datasets.push({label: g.label, data: g.points.map((p) => ({x: p[0], y: p[1]})), showLine: true,
                     pointRadius: 0, borderWidth: 1.2, borderDash: [5, 4], borderColor: color(g.run),
                     backgroundColor: color(g.run), tension: 0});
    }
    const canvas = document.getElementById('canvas-' + c.anchor);
    new Chart(canvas, {
      type: 'scatter',
      data: {datasets},
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: false,
        scales: {x: scale(c.x, c.traces.flatMap((t) => t.points.map((p) => p[0]))),
                 y: scale(c.y, c.traces.flatMap((t) => t.points.map((p) => p[1])))},
        plugins: {
          legend: {labels: {filter: (item) => item.text !== ''}},
          tooltip: {
            filter: (item) => item.dataset.label !== '',
            callbacks: {
              label: (item) => item.dataset.label + ': ' + quantity(item.raw.x, c.x.unit) + ' -> ' +
                               quantity(item.raw.y, c.y.unit) + (item.raw.src ? ' (' + item.raw.src + ')' : ''),
            },
          },
          gpuscopeMarkers: {markers: c.markers},
        },
      },
      plugins: [markerPlugin, drawnPlugin],
    });
  }
  // The first charts are drawn at once, the rest a few at a time between
  // frames: the page shows and scrolls at once, whatever the chart count
  // (125 charts take about a second to lay out without a GPU).
  const body = document.body.dataset;
  body.charts = String(data.charts.length);
  const firstBatch = 6, batch = 8;
  let next = 0;
  function drawSome(n) {
    for (const end = Math.min(next + n, data.charts.length); next < end; ++next) draw(data.charts[next]);
  }
  function finish() {
    body.drawn = String(drawn);
    body.renderMs = (performance.now() - t0).toFixed(0);
    body.errors = String(window.gpuscopeErrors.length);
    body.ready = '1';
  }
  const pictures = Array.from(document.querySelectorAll('img.gpuscope-picture'));
  body.pictures = String(pictures.length);
  Promise.all(pictures.map((img) => img.decode().then(
      () => img.naturalWidth === Number(img.getAttribute('width')) &&
            img.naturalHeight === Number(img.getAttribute('height')),
      () => false)))
    .then((ok) => { body.picturesDecoded = String(ok.filter((x) => x).length); });
  drawSome(firstBatch);
  body.firstMs = (performance.now() - t0).toFixed(0);
  (function more() {
    if (next >= data.charts.length) return finish();
    drawSome(batch);
    setTimeout(more, 0);
  })();
})();
