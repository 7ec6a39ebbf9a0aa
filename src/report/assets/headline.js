// Draws report.html's headline curves (first_screen.hpp): every measured
// run's latency and read bandwidth against footprint, and the published
// figures of each reference profile whose box is ticked: a dotted step over
// each level's footprints, a dotted upright line at a capacity published
// without a value on that axis, triangles at published points.
// Input: the JSON in #gpuscope-headline (first_screen.hpp's headline_data);
// report.js runs first and lends its helpers (window.gpuscopeCharts).
// Contract with the real-browser test: <body> carries data-headline-charts
// (how many) and data-headline-drawn (how many drew); each canvas carries
// data-drawn="1", and data-painted and data-label-overlaps under #selftest.
(function () {
  'use strict';
  const g = window.gpuscopeCharts;
  const data = JSON.parse(document.getElementById('gpuscope-headline').textContent);
  const refPalette = ['#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#8c564b', '#ff7f0e', '#9467bd', '#2ca02c'];
  const refColor = (i) => refPalette[i % refPalette.length];
  const checked = data.references.map((r) => r.checked);
  for (const el of document.querySelectorAll('span.swatch[data-reference]'))
    el.style.background = refColor(Number(el.dataset.reference));

  // Labels of the ticked references' steps (at their right end) and marks
  // (along the bottom, staggered so that neighbours do not print over each other).
  const referencePlugin = {
    id: 'gpuscopeReferences',
    afterDatasetsDraw(chart, args, opts) {
      const {ctx, chartArea: area, scales} = chart;
      ctx.save();
      ctx.beginPath();
      ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
      ctx.clip();
      ctx.font = '11px sans-serif';
      let k = 0;
      data.references.forEach((r, i) => {
        if (!checked[i]) return;
        const curve = r.curves[opts.name];
        ctx.fillStyle = ctx.strokeStyle = refColor(i);
        ctx.textAlign = 'right';
        for (const [, x1, y, label] of curve.steps) {
          const px = Math.min(scales.x.getPixelForValue(x1), area.right) - 3;
          const py = scales.y.getPixelForValue(y);
          // Above its step, or below it where the step runs along the top.
          ctx.fillText(r.name + ' ' + label, px, py - 4 < area.top + 12 ? py + 13 : py - 4);
        }
        ctx.textAlign = 'left';
        ctx.setLineDash([2, 3]);
        ctx.lineWidth = 1.5;
        for (const [x, label] of curve.marks) {
          const px = scales.x.getPixelForValue(x);
          ctx.beginPath();
          ctx.moveTo(px, area.top);
          ctx.lineTo(px, area.bottom);
          ctx.stroke();
          ctx.fillText(r.name + ' ' + label + ' ' + g.quantity(x, 'B'), px + 3, area.bottom - 4 - 12 * (k++ % 4));
        }
        ctx.setLineDash([]);
      });
      ctx.restore();
    },
  };

  const selfTest = window.location.hash === '#selftest';
  let drawn = 0;
  const drawnPlugin = {
    id: 'gpuscopeHeadlineDrawn',
    afterDraw(chart) {
      if (chart.canvas.dataset.drawn) return;
      chart.canvas.dataset.drawn = '1';
      if (selfTest) g.checkDrawing(chart);
      drawn++;
    },
  };

  function referenceDatasets(c) {
    const out = [];
    data.references.forEach((r, i) => {
      const curve = r.curves[c.name];
      const col = refColor(i);
      if (curve.steps.length) {
        const pts = [];
        for (const [x0, x1, y] of curve.steps) pts.push({x: x0, y}, {x: x1, y}, {x: x1, y: null});
        out.push({label: r.name + ' (published)', data: pts, showLine: true, spanGaps: false, borderDash: [3, 3],
                  borderWidth: 2.5, pointRadius: 0, borderColor: col, backgroundColor: col, hidden: !checked[i],
                  reference: i});
      }
      if (curve.points.length)
        out.push({label: r.name + ' (published points)', data: curve.points.map((p) => ({x: p[0], y: p[1], src: p[2]})),
                  showLine: false, pointStyle: 'triangle', pointRadius: 7, borderColor: col,
                  backgroundColor: g.alpha(col, 0.5), hidden: !checked[i], reference: i});
      if (!curve.steps.length && !curve.points.length && curve.marks.length)
        out.push({label: r.name + ' (published capacities)', data: [], borderColor: col, backgroundColor: col,
                  borderDash: [2, 3], hidden: !checked[i], reference: i});
    });
    return out;
  }

  const charts = [];
  function draw(c) {
    const datasets = c.traces.map((t) => ({
      label: t.label, data: t.points.map((p) => ({x: p[0], y: p[1]})), showLine: true, borderColor: g.color(t.run),
      backgroundColor: g.color(t.run), borderWidth: 2, pointRadius: 1.5, tension: 0}));
    datasets.push(...referenceDatasets(c));
    const values = (k) => c.traces.flatMap((t) => t.points.map((p) => p[k]));
    charts.push(new Chart(document.getElementById('canvas-headline-' + c.name), {
      type: 'scatter',
      data: {datasets},
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: false,
        scales: {x: g.scale(c.x, values(0)), y: g.scale(c.y, values(1))},
        plugins: {
          legend: {
            labels: {filter: (item, chartData) => !chartData.datasets[item.datasetIndex].hidden},
            onClick: () => {},  // the checkboxes decide what is shown
          },
          tooltip: {
            callbacks: {
              label: (item) => item.dataset.label + ': ' + g.quantity(item.raw.x, c.x.unit) + ' -> ' +
                               g.quantity(item.raw.y, c.y.unit) + (item.raw.src ? ' (' + item.raw.src + ')' : ''),
            },
          },
          gpuscopeReferences: {name: c.name},
        },
      },
      plugins: [referencePlugin, drawnPlugin],
    }));
  }

  for (const box of document.querySelectorAll('input.reference-toggle')) {
    box.addEventListener('change', () => {
      const i = Number(box.dataset.reference);
      checked[i] = box.checked;
      for (const chart of charts) {
        for (const d of chart.data.datasets) if (d.reference === i) d.hidden = !box.checked;
        chart.update();
      }
    });
  }

  const body = document.body.dataset;
  body.headlineCharts = String(data.charts.length);
  for (const c of data.charts) draw(c);
  body.headlineDrawn = String(drawn);
})();
