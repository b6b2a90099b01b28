// tracegate history dashboard: draws every <figure class="chart"> of the page
// with uPlot from the page's points table (#points), whose column
// data-col holds the series. Adds the noise band (data-band: [start, end,
// low, high] per level), the change mark (data-step, data-label), environment
// changes (rows with data-env) and the expected level (data-expected). A
// click on the plot opens the nearest run's CI run, else its commit. After
// drawing, each figure gets data-drawn (its points on the chart), which
// scripts/dashboard-check compares with data-points.
(function () {
  "use strict";
  var MARKS = { regression: "#c62828", improvement: "#2e7d32", suspicious: "#ef6c00" };

  function value(cell) {
    var text = cell ? cell.textContent.trim() : "";
    return text === "" ? null : parseFloat(text);
  }

  function href(row) {
    var link = row.querySelector("td.run a") || row.querySelector("td.commit a");
    return link ? link.href : null;
  }

  function line(u, x, color, dash, text) {
    var ctx = u.ctx;
    var px = Math.round(u.valToPos(x, "x", true)) + 0.5;
    var top = u.bbox.top;
    ctx.save();
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5 * uPlot.pxRatio;
    ctx.setLineDash(dash.map(function (d) { return d * uPlot.pxRatio; }));
    ctx.beginPath();
    ctx.moveTo(px, top);
    ctx.lineTo(px, top + u.bbox.height);
    ctx.stroke();
    if (text) {
      ctx.fillStyle = color;
      ctx.font = (11 * uPlot.pxRatio) + "px sans-serif";
      ctx.textBaseline = "top";
      // Right of the line, or left of it near the plot's right edge.
      var right = px > u.bbox.left + u.bbox.width * 0.85;
      ctx.textAlign = right ? "right" : "left";
      ctx.fillText(text, px + (right ? -3 : 3) * uPlot.pxRatio, top + 2 * uPlot.pxRatio);
    }
    ctx.restore();
  }

  function draw(figure, rows) {
    var column = +figure.dataset.col;
    var xs = [];
    var ys = [];
    rows.forEach(function (row, i) {
      xs.push(i);
      ys.push(value(row.cells[column]));
    });
    var band = JSON.parse(figure.dataset.band || "[]");
    var step = figure.dataset.step === undefined ? null : +figure.dataset.step;
    var label = figure.dataset.label || "";
    var expected = figure.dataset.expected === undefined ? null : +figure.dataset.expected;
    var unit = figure.dataset.unit || "";
    var envs = [];
    rows.forEach(function (row, i) {
      if (row.hasAttribute("data-env")) envs.push(i);
    });
    var present = ys.filter(function (y) { return y !== null; });
    var low = Math.min.apply(null, present);
    var high = Math.max.apply(null, present);
    band.forEach(function (s) { low = Math.min(low, s[2]); high = Math.max(high, s[3]); });
    if (expected !== null) { low = Math.min(low, expected); high = Math.max(high, expected); }
    var pad = (high - low) * 0.08 || Math.abs(high) * 0.05 || 1;
    var plot = figure.querySelector(".plot");

    var opts = {
      width: Math.max(plot.clientWidth, 300),
      height: 220,
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: false },
        y: { range: function () { return [low - pad, high + pad]; } }
      },
      axes: [
        {
          // The run number over its day (the time cell, "2026-11-14 09:30",
          // as 11-14: the table has the year), spaced so labels never touch.
          label: "run, date",
          size: 48,
          space: 56,
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
          values: function (u, splits) {
            return splits.map(function (i) {
              var row = rows[i];
              var day = row ? row.cells[3].textContent.trim().slice(5, 10) : "";
              return "#" + (i + 1) + (day ? "\n" + day : "");
            });
          }
        },
        {
          label: unit === "×" ? "candidate / baseline" : "GPU µs per step",
          size: 72,
          values: function (u, splits) {
            return splits.map(function (v) { return +v.toPrecision(4) + (unit === "×" ? "×" : ""); });
          }
        }
      ],
      series: [
        {
          label: "run",
          value: function (u, i) {
            if (i === null || !rows[i]) return "—";
            return "#" + (i + 1) + " " + rows[i].cells[1].textContent + " " + rows[i].cells[3].textContent;
          }
        },
        {
          label: unit === "×" ? "ratio" : "µs / step",
          stroke: "#1565c0",
          width: 1.5,
          spanGaps: false,
          points: { show: xs.length <= 150, size: 5 },
          value: function (u, v) { return v === null ? "—" : +v.toPrecision(4) + (unit === "×" ? "×" : " µs"); }
        }
      ],
      hooks: {
        drawClear: [function (u) {
          var ctx = u.ctx;
          ctx.save();
          ctx.fillStyle = "rgba(21, 101, 192, 0.12)";
          band.forEach(function (s) {
            var x0 = u.valToPos(s[0] - 0.5, "x", true);
            var x1 = u.valToPos(s[1] + 0.5, "x", true);
            var y0 = u.valToPos(s[3], "y", true);
            var y1 = u.valToPos(s[2], "y", true);
            x0 = Math.max(x0, u.bbox.left);
            x1 = Math.min(x1, u.bbox.left + u.bbox.width);
            ctx.fillRect(x0, y0, x1 - x0, Math.max(y1 - y0, 1));
          });
          ctx.restore();
        }],
        draw: [function (u) {
          envs.forEach(function (i) { line(u, i - 0.5, "#757575", [4, 3], "env"); });
          if (expected !== null) {
            var ctx = u.ctx;
            var py = Math.round(u.valToPos(expected, "y", true)) + 0.5;
            ctx.save();
            ctx.strokeStyle = "#6a1b9a";
            ctx.setLineDash([6 * uPlot.pxRatio, 4 * uPlot.pxRatio]);
            ctx.beginPath();
            ctx.moveTo(u.bbox.left, py);
            ctx.lineTo(u.bbox.left + u.bbox.width, py);
            ctx.stroke();
            ctx.restore();
          }
          if (step !== null) line(u, step - 0.5, MARKS[label] || "#424242", [], label.replace(/_/g, " "));
          var drawn = 0;
          u.data[1].forEach(function (y) { if (y !== null) drawn++; });
          figure.dataset.drawn = drawn;
        }]
      }
    };
    var chart = new uPlot(opts, [xs, ys], plot);
    chart.over.addEventListener("click", function () {
      var i = chart.cursor.idx;
      var target = i === null || i === undefined ? null : href(rows[i]);
      if (target) window.location.href = target;
    });
    chart.over.style.cursor = "pointer";
  }

  var table = document.getElementById("points");
  if (!table) return;
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  Array.prototype.forEach.call(document.querySelectorAll("figure.chart"), function (figure) {
    draw(figure, rows);
  });
})();
