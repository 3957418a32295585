// The workload form: fill it from a workload document, read it back as the request body,
// and show the API's field errors (problem+json errors[].field) next to the fields they name.
"use strict";

(function () {
  const SIZE = /^\s*(\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*([kmbt])?\s*$/i;
  const SUFFIX = { k: 1e3, m: 1e6, b: 1e9, t: 1e12 };
  // Request keys beside the workload (RecommendationRequest).
  const REQUEST_KEYS = ["objective", "top", "profile_id", "landscape"];
  // "Value error, model.sequence_length: a transformer needs ..." names its field first.
  const NAMED_IN_MESSAGE = /^(?:Value error, )?([a-z_]+(?:\.[a-z_]+)+):/;

  function form() { return document.getElementById("workload-form"); }

  function controls() {
    return Array.from(form().querySelectorAll("input[data-path], select[data-path]"))
      .filter((el) => el.id !== "f-model" && el.type !== "file");
  }

  function getPath(obj, path) {
    return path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
  }

  function setPath(obj, path, value) {
    const keys = path.split(".");
    let o = obj;
    keys.slice(0, -1).forEach((k) => {
      if (typeof o[k] !== "object" || o[k] === null) o[k] = {};
      o = o[k];
    });
    o[keys[keys.length - 1]] = value;
  }

  function deletePath(obj, path) {
    const keys = path.split(".");
    const parents = [obj];
    for (const k of keys.slice(0, -1)) {
      const next = parents[parents.length - 1][k];
      if (typeof next !== "object" || next === null) return;
      parents.push(next);
    }
    delete parents[parents.length - 1][keys[keys.length - 1]];
    for (let i = parents.length - 1; i > 0; i--) {   // drop emptied parents
      if (Object.keys(parents[i]).length === 0) delete parents[i - 1][keys[i - 1]];
    }
  }

  function parseSize(text) {
    const m = SIZE.exec(text);
    if (!m) return null;
    return Number(m[1]) * (m[2] ? SUFFIX[m[2].toLowerCase()] : 1);
  }

  function showValue(el, value) {
    if (el.type === "checkbox") { el.checked = value === true; return; }
    if (el.tagName === "SELECT" && (value === undefined || value === null)) {
      el.selectedIndex = 0;   // the first option is the contract's default
      return;
    }
    if (value === undefined || value === null) { el.value = ""; return; }
    el.value = Array.isArray(value) ? value.join(", ") : String(value);
  }

  // Fill the form from a request or workload document; what it cannot show goes to "extra".
  function fill(doc) {
    const rest = JSON.parse(JSON.stringify(doc || {}));
    controls().forEach((el) => {
      showValue(el, getPath(rest, el.dataset.path));
      deletePath(rest, el.dataset.path);
    });
    const model = document.getElementById("f-model");
    const name = getPath(rest, "model.name");
    const params = getPath(rest, "model.parameters");
    model.value = name !== undefined ? String(name) : params !== undefined ? String(params) : "";
    deletePath(rest, "model.name");
    deletePath(rest, "model.parameters");
    const clouds = getPath(rest, "constraints.clouds") || [];
    form().querySelectorAll("input[name=cloud]").forEach((box) => {
      box.checked = clouds.includes(box.value);
    });
    deletePath(rest, "constraints.clouds");
    REQUEST_KEYS.forEach((k) => { if (k !== "profile_id") delete rest[k]; });
    if (doc && doc.top === undefined) document.getElementById("f-top").value = "5";
    if (doc && doc.objective === undefined) {
      document.getElementById("f-objective").value = "balanced";
    }
    const extra = document.getElementById("f-extra");
    extra.value = Object.keys(rest).length ? JSON.stringify(rest, null, 2) : "";
    document.getElementById("arch").open = getPath(doc || {}, "model.architecture") !== undefined;
  }

  function readValue(el) {
    if (el.type === "checkbox") return el.checked ? true : undefined;
    const text = el.value.trim();
    if (text === "") return undefined;
    const kind = el.dataset.type;
    if (kind === "int") return /^[+-]?\d+$/.test(text) ? parseInt(text, 10) : text;
    if (kind === "number") {
      const n = Number(text);
      return text !== "" && Number.isFinite(n) ? n : text;   // the API names a bad number
    }
    if (kind === "list") return text.split(",").map((s) => s.trim()).filter(Boolean);
    return text;
  }

  // The request body the form describes; throws {field, message} for unreadable extra JSON.
  function read() {
    const extraText = document.getElementById("f-extra").value.trim();
    let body = {};
    if (extraText) {
      try {
        body = JSON.parse(extraText);
      } catch (e) {
        throw { field: "(extra)", message: "not JSON: " + e.message };
      }
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        throw { field: "(extra)", message: "must be a JSON object of workload fields" };
      }
    }
    controls().forEach((el) => {
      const value = readValue(el);
      if (value !== undefined) setPath(body, el.dataset.path, value);
    });
    const model = document.getElementById("f-model").value.trim();
    if (model) {
      const size = parseSize(model);
      if (size !== null) setPath(body, "model.parameters", size);
      else setPath(body, "model.name", model);
    }
    const clouds = Array.from(form().querySelectorAll("input[name=cloud]:checked"))
      .map((b) => b.value);
    if (clouds.length) setPath(body, "constraints.clouds", clouds);
    return body;
  }

  function clearErrors() {
    form().querySelectorAll(".field-error").forEach((p) => p.remove());
    form().querySelectorAll("[aria-invalid]").forEach((el) => {
      el.removeAttribute("aria-invalid");
      const ids = (el.getAttribute("aria-describedby") || "").split(" ")
        .filter((id) => id && !id.startsWith("err-"));
      if (ids.length) el.setAttribute("aria-describedby", ids.join(" "));
      else el.removeAttribute("aria-describedby");
    });
    const box = document.getElementById("form-error");
    box.hidden = true;
    box.textContent = "";
  }

  function segments(path) {
    return path.split(".").filter((p) => p && !/^\d+$/.test(p));
  }

  // Whether the segments of ``inner`` appear, in order, within ``outer`` (an error's field
  // may carry a union tag the form's path does not: model.architecture.transformer.layers).
  function within(inner, outer) {
    let i = 0;
    for (const part of outer) if (part === inner[i]) i++;
    return i === inner.length;
  }

  // The element an error's dotted field belongs to: the form element whose path matches most
  // of it (the field itself, else its nearest shown parent), else the extra-JSON box when that
  // holds the key.
  function anchorFor(field) {
    const parts = segments(field);
    let best = null, bestLength = 0;
    form().querySelectorAll("[data-path], [data-alias]").forEach((el) => {
      [el.dataset.path, el.dataset.alias].filter(Boolean).forEach((path) => {
        const own = segments(path);
        if (own[0] === parts[0] && own.length > bestLength && within(own, parts)) {
          best = el;
          bestLength = own.length;
        }
      });
    });
    if (best) return best;
    const extra = document.getElementById("f-extra");
    try {
      if (parts.length && getPath(JSON.parse(extra.value || "{}"), parts[0]) !== undefined) {
        return extra;
      }
    } catch (e) { /* unreadable extra JSON: fall through */ }
    return null;
  }

  let serial = 0;

  function markField(el, field, message) {
    const p = document.createElement("p");
    p.className = "field-error";
    p.id = "err-" + (++serial);
    p.dataset.field = field;
    p.textContent = message;
    if (el.tagName === "FIELDSET") {
      const legend = el.querySelector("legend");
      legend.after(p);
    } else {
      const holder = el.closest(".field") || el.parentElement;
      holder.appendChild(p);
    }
    el.setAttribute("aria-invalid", "true");
    const ids = (el.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
    el.setAttribute("aria-describedby", [...ids, p.id].join(" "));
    const details = el.closest("details");
    if (details) details.open = true;
  }

  // Show each {field, message}; what no field holds goes to the form-level box. A check
  // across fields ("(whole body)") is placed at the field its message names first.
  function showErrors(errors, detail) {
    const box = document.getElementById("form-error");
    const general = [];
    let first = null;
    (errors || []).forEach((e) => {
      const message = (e.message || "").replace(/^Value error, /, "");
      const whole = !e.field || e.field.startsWith("(whole");
      const named = whole ? NAMED_IN_MESSAGE.exec(message) : null;
      const field = named ? named[1] : whole ? "" : e.field;
      const el = field ? anchorFor(field) : null;
      const text = field && !message.startsWith(field + ":") ? `${field}: ${message}` : message;
      if (el) {
        markField(el, field, text);
        first = first || el;
      } else {
        general.push(text);
      }
    });
    if (!errors || !errors.length) general.push(detail || "The request was refused.");
    if (general.length) {
      box.textContent = general.join(" · ");
      box.hidden = false;
    }
    const focus = first && first.tagName === "FIELDSET" ? first.querySelector("input, select")
      : first;
    if (focus) focus.focus();
    else if (general.length) box.scrollIntoView({ block: "nearest" });
  }

  window.RecForm = { fill, read, clearErrors, showErrors, parseSize };
})();
