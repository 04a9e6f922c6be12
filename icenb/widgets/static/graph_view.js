// GraphView: the browser side of icenb's clickable graph, an anywidget view (anywidget 0.11).
//
// The model's synced traits (the Python class in icenb/widgets/ declares the same ones):
//   svg         an SVG document as Graphviz writes it; a clickable node is a <g class="node ...">
//               whose first <title> child holds the node id
//   nodes       node id -> {label, kind, snapshot_id, version_id, fold, parents, children};
//               ids are strings, snapshot ids decimal strings (64-bit: never made Numbers)
//   selected    the primary selection's node id ("" = none)
//   compare     the second selection's node id ("" = none)
//   marked      node ids drawn with a subtle marker
//   parent_key  the arrow key that moves to parents[0] ("ArrowDown" or "ArrowLeft")
//   height      CSS height of the viewport
//   status      a short message under the graph ("" hides it)
//   language    the language of the view's own labels: "en" (default) or "zh" (see LABELS)
// A click selects, Shift/Ctrl/Meta-click toggles the compare node, a click on a fold sends
// {event: "expand", node: id}. Wheel zooms around the pointer, dragging pans, arrow keys walk
// the graph. All state lives in render()'s closure, so two views of one model are independent.
// A plain ES module with no imports: anywidget loads this file's text as the widget's _esm.

const MIN_ZOOM = 0.1;
const MAX_ZOOM = 8;
const ZOOM_STEP = 1.25; // one click of "+" or "−"
const DRAG_PX = 4; // a pointer that moves further than this pans instead of clicking
const REVEAL_MARGIN = 16; // px kept between a revealed node and the viewport's edge

const OPPOSITE = { ArrowDown: "ArrowUp", ArrowUp: "ArrowDown", ArrowLeft: "ArrowRight", ArrowRight: "ArrowLeft" };

// CSS lengths an SVG's width/height attributes use, in CSS px per unit.
const UNIT_PX = { "": 1, px: 1, pt: 96 / 72, pc: 16, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 };

const hasOwn = (obj, key) => obj != null && Object.prototype.hasOwnProperty.call(obj, key);

// The view's own labels by language, keyed by the English text (icenb/labels_zh.py holds the
// same Chinese for the Python side). Node labels and the status come translated from Python.
export const LABELS = {
  zh: {
    "graph: click a node to select it, arrow keys move the selection": "图：点击节点选中，方向键移动选择",
    "zoom in": "放大",
    "zoom out": "缩小",
    fit: "适应",
    "fit the whole graph": "显示整个图",
  },
};

// `text` in `language`; English when the table has no entry for it.
export function label(text, language) {
  const table = hasOwn(LABELS, language) ? LABELS[language] : null;
  return table && hasOwn(table, text) ? table[text] : text;
}
const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));

function cssLength(text) {
  const m = /^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(px|pt|pc|in|cm|mm)?\s*$/i.exec(text || "");
  if (!m) return null;
  const v = parseFloat(m[1]) * UNIT_PX[(m[2] || "").toLowerCase()];
  return v > 0 && Number.isFinite(v) ? v : null;
}

function viewBoxSize(svg) {
  const parts = (svg.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
  if (parts.length !== 4 || !parts.every(Number.isFinite) || parts[2] <= 0 || parts[3] <= 0) {
    return null;
  }
  return { w: parts[2], h: parts[3] };
}

// Drop what could run code: the SVG comes from the kernel, but it is shown inline.
function sanitize(svg) {
  for (const el of [...svg.querySelectorAll("script")]) el.remove();
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const attr of [...el.attributes]) {
      const name = attr.name.toLowerCase();
      const value = attr.value.replace(/[\s\u0000-\u001f]+/g, "").toLowerCase();
      if (name.startsWith("on") || (name.endsWith("href") && value.startsWith("javascript:"))) {
        el.removeAttribute(attr.name);
      }
    }
  }
}

// The SVG text as an <svg> element of this document (not yet attached), or null.
function parseSvg(text) {
  if (!text || !text.trim()) return null;
  let found = null;
  try {
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const root = doc.documentElement;
    if (root && root.localName === "svg" && doc.getElementsByTagName("parsererror").length === 0) {
      found = root;
    }
  } catch (err) {
    found = null;
  }
  if (!found) {
    // Not well-formed XML (e.g. HTML entities): the HTML parser is forgiving. A <template>'s
    // content is inert, so nothing in it loads or runs while it is parsed.
    const holder = document.createElement("template");
    holder.innerHTML = text;
    found = holder.content.querySelector("svg");
  }
  if (!found) return null;
  const svg = document.importNode(found, true);
  sanitize(svg);
  return svg;
}

// Every Graphviz-style node of the SVG: id (its first <title>'s text) -> its <g>. The <title>s
// are removed afterwards (the view shows its own tooltip; the browser's would double it).
function indexNodes(svg) {
  const ids = new Map();
  for (const g of svg.querySelectorAll("g")) {
    if (!g.classList.contains("node")) continue;
    const title = [...g.children].find((c) => c.localName === "title");
    if (title && !ids.has(title.textContent)) ids.set(title.textContent, g);
  }
  for (const title of [...svg.querySelectorAll("title")]) title.remove();
  return ids;
}

function button(cls) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = cls;
  return b;
}

function render({ model, el }) {
  // ---- DOM ---------------------------------------------------------------------------------
  const root = document.createElement("div");
  root.className = "icenb-gv-root";
  const viewport = document.createElement("div");
  viewport.className = "icenb-gv";
  viewport.tabIndex = 0;
  viewport.setAttribute("role", "group");
  const canvas = document.createElement("div");
  canvas.className = "icenb-gv-canvas";
  viewport.appendChild(canvas);
  const toolbar = document.createElement("div");
  toolbar.className = "icenb-gv-toolbar";
  const zoomIn = button("icenb-gv-zoom-in");
  const zoomOut = button("icenb-gv-zoom-out");
  const fitButton = button("icenb-gv-fit");
  toolbar.append(zoomIn, zoomOut, fitButton);
  const tip = document.createElement("div");
  tip.className = "icenb-gv-tip";
  tip.setAttribute("role", "tooltip");
  tip.hidden = true;
  const status = document.createElement("div");
  status.className = "icenb-gv-status";
  root.append(viewport, toolbar, tip, status);
  el.appendChild(root);

  // ---- state (this view's only) ------------------------------------------------------------
  let svgEl = null; // the inline <svg>
  let ids = new Map(); // node id -> <g>, for every node of the SVG
  let k = 1; // zoom
  let tx = 0; // pan, px
  let ty = 0;
  let userMoved = false; // the user zoomed or panned: keep the view when the SVG changes
  let pendingFit = false; // the first fit waits until the viewport has a size
  let gesture = null; // the pointer pressed on the viewport: {id, x, y, tx, ty, node, dragging}

  const nodesOf = () => model.get("nodes") || {};
  const str = (name) => {
    const v = model.get(name);
    return v == null ? "" : String(v);
  };

  // ---- labels ------------------------------------------------------------------------------
  function drawLabels() {
    const lang = str("language");
    viewport.setAttribute("aria-label", label("graph: click a node to select it, arrow keys move the selection", lang));
    for (const [b, text, name] of [
      [zoomIn, "+", "zoom in"],
      [zoomOut, "\u2212", "zoom out"],
      [fitButton, label("fit", lang), "fit the whole graph"],
    ]) {
      b.textContent = text;
      b.title = label(name, lang);
      b.setAttribute("aria-label", label(name, lang));
    }
  }

  // ---- transform ---------------------------------------------------------------------------
  function applyTransform() {
    canvas.style.transform = `translate(${+tx.toFixed(2)}px, ${+ty.toFixed(2)}px) scale(${+k.toFixed(4)})`;
  }

  // The SVG's size in CSS px at zoom 1.
  function naturalSize() {
    if (!svgEl) return null;
    const r = svgEl.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) return { w: r.width / k, h: r.height / k };
    const w = cssLength(svgEl.getAttribute("width"));
    const h = cssLength(svgEl.getAttribute("height"));
    return w && h ? { w, h } : viewBoxSize(svgEl);
  }

  function zoomAt(px, py, factor) {
    const nk = clamp(k * factor, MIN_ZOOM, MAX_ZOOM);
    if (nk === k) return;
    tx = px - ((px - tx) * nk) / k;
    ty = py - ((py - ty) * nk) / k;
    k = nk;
    userMoved = true;
    applyTransform();
  }

  function zoomCentre(factor) {
    zoomAt(viewport.clientWidth / 2, viewport.clientHeight / 2, factor);
  }

  // Zoom 1, or scaled to the viewport's width when the graph is wider. False: no size known yet.
  function initialFit() {
    const size = naturalSize();
    const vw = viewport.clientWidth;
    if (!size || !(vw > 0)) return false;
    k = size.w > vw ? clamp(vw / size.w, MIN_ZOOM, MAX_ZOOM) : 1;
    tx = 0;
    ty = 0;
    applyTransform();
    return true;
  }

  // The whole graph, centred (never enlarged beyond zoom 1).
  function fitAll() {
    const size = naturalSize();
    const vw = viewport.clientWidth;
    const vh = viewport.clientHeight;
    if (!size || !(vw > 0) || !(vh > 0)) return;
    k = clamp(Math.min(vw / size.w, vh / size.h, 1), MIN_ZOOM, MAX_ZOOM);
    tx = (vw - size.w * k) / 2;
    ty = Math.max(0, (vh - size.h * k) / 2);
    userMoved = true;
    applyTransform();
  }

  // The pan along one axis that brings [lo, hi] inside [vlo, vhi] (0 when it is already in).
  function nudge(lo, hi, vlo, vhi) {
    if (lo >= vlo && hi <= vhi) return 0;
    const m = Math.min(REVEAL_MARGIN, (vhi - vlo) / 4);
    if (hi - lo > vhi - vlo - 2 * m || lo < vlo) return vlo + m - lo; // too big: show its start
    return vhi - m - hi;
  }

  // Pan, as little as needed, so the selected node is inside the viewport (no-op without layout).
  function reveal() {
    const g = ids.get(str("selected"));
    if (!g) return;
    const r = g.getBoundingClientRect();
    const v = viewport.getBoundingClientRect();
    if (!(r.width > 0 || r.height > 0) || !(v.width > 0 && v.height > 0)) return;
    const dx = nudge(r.left, r.right, v.left, v.right);
    const dy = nudge(r.top, r.bottom, v.top, v.bottom);
    if (dx === 0 && dy === 0) return;
    tx += dx;
    ty += dy;
    applyTransform();
  }

  // ---- drawing -----------------------------------------------------------------------------
  function decorate() {
    const nodes = nodesOf();
    for (const [id, g] of ids) {
      const info = hasOwn(nodes, id) ? nodes[id] : null;
      if (info) {
        g.setAttribute("data-node-id", id);
        for (const [attr, key] of [["data-snapshot-id", "snapshot_id"], ["data-version-id", "version_id"]]) {
          if (info[key] != null && info[key] !== "") g.setAttribute(attr, String(info[key]));
          else g.removeAttribute(attr);
        }
        g.setAttribute("role", "button");
        g.setAttribute("aria-label", info.label ? String(info.label) : id);
        g.classList.add("icenb-gv-node");
        g.classList.toggle("icenb-gv-fold", !!info.fold);
      } else {
        for (const attr of ["data-node-id", "data-snapshot-id", "data-version-id", "role", "aria-label"]) {
          g.removeAttribute(attr);
        }
        g.classList.remove("icenb-gv-node", "icenb-gv-fold");
      }
    }
  }

  function paint() {
    const selected = str("selected");
    const compare = str("compare");
    const marked = new Set((model.get("marked") || []).map(String));
    for (const [id, g] of ids) {
      g.classList.toggle("icenb-gv-selected", id === selected);
      g.classList.toggle("icenb-gv-compare", id === compare && compare !== "");
      g.classList.toggle("icenb-gv-marked", marked.has(id));
      if (id === selected) g.setAttribute("aria-current", "true");
      else g.removeAttribute("aria-current");
    }
  }

  function drawSvg() {
    hideTip();
    const svg = parseSvg(str("svg"));
    canvas.replaceChildren();
    svgEl = svg;
    ids = new Map();
    if (svg) {
      // Keep the SVG's own size at zoom 1; without width/height an inline SVG would stretch.
      const vb = viewBoxSize(svg);
      if (vb && !svg.getAttribute("width")) svg.setAttribute("width", String(vb.w));
      if (vb && !svg.getAttribute("height")) svg.setAttribute("height", String(vb.h));
      canvas.appendChild(svg);
      ids = indexNodes(svg);
    }
    decorate();
    paint();
    if (!svg) {
      k = 1;
      tx = 0;
      ty = 0;
      applyTransform();
      pendingFit = false;
    } else if (!userMoved) {
      pendingFit = !initialFit();
    }
    reveal();
  }

  function drawHeight() {
    viewport.style.height = str("height") || "420px";
  }

  function drawStatus() {
    const text = str("status");
    status.textContent = text;
    status.hidden = text === "";
  }

  // ---- tooltip -----------------------------------------------------------------------------
  function hideTip() {
    tip.hidden = true;
  }

  function showTip(id, clientX, clientY) {
    const info = nodesOf()[id];
    if (!info) return hideTip();
    const text = info.label ? String(info.label) : id;
    if (tip.textContent !== text) tip.textContent = text;
    tip.hidden = false;
    const box = root.getBoundingClientRect();
    let x = clientX - box.left + 14;
    let y = clientY - box.top + 16;
    const w = tip.offsetWidth;
    const h = tip.offsetHeight;
    if (box.width > 0 && x + w > box.width) x = Math.max(0, clientX - box.left - w - 8);
    if (box.height > 0 && y + h > box.height) y = Math.max(0, clientY - box.top - h - 8);
    tip.style.left = `${Math.round(x)}px`;
    tip.style.top = `${Math.round(y)}px`;
  }

  // ---- actions -----------------------------------------------------------------------------
  function nodeAt(target) {
    const g = target && typeof target.closest === "function" ? target.closest(".icenb-gv-node") : null;
    return g && canvas.contains(g) ? g.getAttribute("data-node-id") : null;
  }

  function select(id) {
    model.set("selected", id);
    if (str("compare") === id) model.set("compare", "");
    model.save_changes();
  }

  function activate(id, additive) {
    const nodes = nodesOf();
    if (!hasOwn(nodes, id)) return;
    if (nodes[id].fold) {
      model.send({ event: "expand", node: id });
      return;
    }
    if (additive) {
      model.set("compare", str("compare") === id ? "" : id);
      model.save_changes();
    } else {
      select(id);
    }
  }

  // Where an arrow key goes from the selection, or null.
  function arrowTarget(key, nodes) {
    const order = Object.keys(nodes);
    const selected = str("selected");
    if (!hasOwn(nodes, selected)) return order.length ? order[0] : null;
    const live = (id) => (id != null && hasOwn(nodes, String(id)) ? String(id) : null);
    const parentKey = hasOwn(OPPOSITE, str("parent_key")) ? str("parent_key") : "ArrowDown";
    const vertical = parentKey === "ArrowDown" || parentKey === "ArrowUp";
    const here = nodes[selected];
    if (key === parentKey) return live((here.parents || [])[0]);
    if (key === OPPOSITE[parentKey]) return live((here.children || [])[0]);
    const parent = (here.parents || [])[0];
    if (parent == null) return null;
    const siblings = hasOwn(nodes, String(parent))
      ? (nodes[String(parent)].children || []).map(String)
      : order.filter((id) => String((nodes[id].parents || [])[0]) === String(parent));
    const at = siblings.indexOf(selected);
    if (at < 0) return null;
    const back = vertical ? key === "ArrowLeft" : key === "ArrowUp";
    return live(siblings[back ? at - 1 : at + 1]);
  }

  // ---- listeners ---------------------------------------------------------------------------
  const domListeners = [];
  const listen = (target, type, fn, options) => {
    target.addEventListener(type, fn, options);
    domListeners.push([target, type, fn, options]);
  };
  const modelListeners = [];
  const watch = (names, fn) => {
    for (const name of names) {
      model.on(`change:${name}`, fn);
      modelListeners.push([`change:${name}`, fn]);
    }
  };

  listen(viewport, "pointerdown", (e) => {
    if (e.button !== 0) return;
    hideTip();
    gesture = { id: e.pointerId, x: e.clientX, y: e.clientY, tx, ty, node: nodeAt(e.target), dragging: false };
    if (typeof viewport.focus === "function") viewport.focus({ preventScroll: true });
  });
  listen(viewport, "pointermove", (e) => {
    if (gesture && e.pointerId === gesture.id) {
      const dx = e.clientX - gesture.x;
      const dy = e.clientY - gesture.y;
      if (!gesture.dragging && Math.hypot(dx, dy) > DRAG_PX) {
        gesture.dragging = true;
        viewport.classList.add("icenb-gv-panning");
        try {
          if (e.pointerId != null) viewport.setPointerCapture(e.pointerId);
        } catch (err) {
          // no capture: the pan still follows the pointer while it is over the viewport
        }
      }
      if (gesture.dragging) {
        tx = gesture.tx + dx;
        ty = gesture.ty + dy;
        userMoved = true;
        applyTransform();
      }
      return;
    }
    const id = nodeAt(e.target);
    if (id) showTip(id, e.clientX, e.clientY);
    else hideTip();
  });
  const endGesture = (e, cancelled) => {
    if (!gesture || e.pointerId !== gesture.id) return;
    const g = gesture;
    gesture = null;
    viewport.classList.remove("icenb-gv-panning");
    try {
      if (e.pointerId != null && viewport.hasPointerCapture && viewport.hasPointerCapture(e.pointerId)) {
        viewport.releasePointerCapture(e.pointerId);
      }
    } catch (err) {
      // already released
    }
    if (!cancelled && !g.dragging && g.node) activate(g.node, e.shiftKey || e.ctrlKey || e.metaKey);
  };
  listen(viewport, "pointerup", (e) => endGesture(e, false));
  listen(viewport, "pointercancel", (e) => endGesture(e, true));
  listen(viewport, "pointerleave", () => hideTip());
  // A click with detail 0 comes from assistive technology or a script, not from a pointer
  // (pointer clicks are handled on pointerup, where a drag can be told from a click).
  listen(viewport, "click", (e) => {
    if (e.detail !== 0) return;
    const id = nodeAt(e.target);
    if (id) activate(id, e.shiftKey || e.ctrlKey || e.metaKey);
  });
  listen(
    viewport,
    "wheel",
    (e) => {
      if (!svgEl) return;
      e.preventDefault();
      hideTip();
      const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? viewport.clientHeight || 400 : 1;
      const dy = clamp(e.deltaY * unit, -300, 300);
      const dx = e.deltaX * unit;
      if (dx !== 0 && Math.abs(dx) > Math.abs(dy)) {
        tx -= dx;
        userMoved = true;
        applyTransform();
        return;
      }
      const v = viewport.getBoundingClientRect();
      zoomAt(e.clientX - v.left, e.clientY - v.top, Math.exp(-dy * 0.002));
    },
    { passive: false },
  );
  listen(viewport, "keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    hideTip(); // the view may move under a resting pointer
    let handled = false;
    if (hasOwn(OPPOSITE, e.key)) {
      handled = true; // arrows stay in the graph (JupyterLab would move between cells)
      const target = arrowTarget(e.key, nodesOf());
      if (target != null && target !== str("selected")) select(target);
    } else if (e.key === "Enter" && !e.shiftKey) {
      const id = str("selected");
      const nodes = nodesOf();
      if (hasOwn(nodes, id) && nodes[id].fold) {
        model.send({ event: "expand", node: id });
        handled = true;
      }
    } else if (e.key === "Escape" && str("compare") !== "") {
      model.set("compare", "");
      model.save_changes();
      handled = true;
    }
    if (handled) {
      e.preventDefault();
      e.stopPropagation();
    }
  });
  listen(zoomIn, "click", () => zoomCentre(ZOOM_STEP));
  listen(zoomOut, "click", () => zoomCentre(1 / ZOOM_STEP));
  listen(fitButton, "click", () => fitAll());

  watch(["svg"], drawSvg);
  watch(["nodes"], () => {
    decorate();
    paint();
    hideTip();
    reveal();
  });
  watch(["selected", "compare"], () => {
    paint();
    reveal();
  });
  watch(["marked"], paint);
  watch(["height"], drawHeight);
  watch(["status"], drawStatus);
  watch(["language"], drawLabels);

  let resizeObserver = null;
  if (typeof ResizeObserver === "function") {
    resizeObserver = new ResizeObserver(() => {
      if (pendingFit && viewport.clientWidth > 0 && initialFit()) {
        pendingFit = false;
        reveal();
      }
    });
    resizeObserver.observe(viewport);
  }

  drawLabels();
  drawHeight();
  drawStatus();
  applyTransform();
  drawSvg();

  return () => {
    for (const [target, type, fn, options] of domListeners) target.removeEventListener(type, fn, options);
    domListeners.length = 0;
    for (const [event, fn] of modelListeners) model.off(event, fn);
    modelListeners.length = 0;
    if (resizeObserver) resizeObserver.disconnect();
    gesture = null;
    hideTip();
  };
}

export default { render };
