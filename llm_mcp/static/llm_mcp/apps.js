// llm_mcp MCP Apps host: renders each App of the chat page in a double iframe (a sandbox proxy
// on LLM_MCP["APPS_SANDBOX_ORIGIN"], the App's HTML inside it) and speaks the MCP Apps
// JSON-RPC over postMessage with it (spec: modelcontextprotocol/ext-apps 2026-01-26).
// No dependencies. Every App is a <div data-mcp-app="<app view URL>"> placed by
// templates/llm_mcp/includes/app.html; Apps that appear later (the conversation re-rendered)
// are mounted too.
(function () {
  "use strict";
  var PROTOCOL = "2026-01-26";
  var HOST_INFO = { name: "llm_mcp", version: "1" };
  var mounted = typeof WeakSet === "function" ? new WeakSet() : null;

  function cookie(name) {
    var found = document.cookie.split("; ").filter(function (c) { return c.indexOf(name + "=") === 0; })[0];
    return found ? decodeURIComponent(found.slice(name.length + 1)) : "";
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": cookie("csrftoken"),
                 "X-Requested-With": "XMLHttpRequest" },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) {
          var error = new Error(data.error || ("HTTP " + response.status));
          error.status = response.status; throw error;
        }
        return data;
      });
    });
  }

  function isObject(value) { return value !== null && typeof value === "object" && !Array.isArray(value); }

  // A JSON-RPC 2.0 message as the spec allows it: a request, a notification or a response.
  function valid(m) {
    if (!isObject(m) || m.jsonrpc !== "2.0") { return false; }
    if ("params" in m && m.params !== undefined && !isObject(m.params) && !Array.isArray(m.params)) { return false; }
    if (typeof m.method === "string") {
      return !("id" in m) || typeof m.id === "string" || (typeof m.id === "number" && isFinite(m.id));
    }
    return ("id" in m) && ("result" in m || isObject(m.error));
  }

  function textOf(params) {
    var content = params.content;
    if (isObject(content)) { content = [content]; }
    if (!Array.isArray(content)) { return ""; }
    return content.filter(function (c) { return isObject(c) && c.type === "text" && typeof c.text === "string"; })
      .map(function (c) { return c.text; }).join("\n");
  }

  function theme() {
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }

  function mount(holder) {
    if (mounted) { if (mounted.has(holder)) { return; } mounted.add(holder); }
    else if (holder.dataset.mounted) { return; }
    holder.dataset.mounted = "1";
    var status = holder.querySelector(".llm-mcp-app-status");
    function say(text) { if (status) { status.textContent = text; status.hidden = !text; } }
    fetch(holder.dataset.mcpApp, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then(function (app) { start(holder, app, say); })
      .catch(function (error) { say("The App could not be loaded (" + error.message + ")."); });
  }

  function start(holder, app, say) {
    var sandboxOrigin = holder.dataset.sandboxOrigin;
    var frame = document.createElement("iframe");
    frame.className = "llm-mcp-app-frame" + (app.prefers_border === false ? "" : " has-border");
    frame.title = "MCP App" + (app.tool && app.tool.title ? ": " + app.tool.title : "");
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    if (app.allow) { frame.setAttribute("allow", app.allow); }
    frame.src = holder.dataset.sandboxUrl + "?host=" + encodeURIComponent(window.location.origin) +
      "&csp=" + encodeURIComponent(app.sandbox_csp || "");
    var state = { ready: false, initialized: false, nextId: 1, pending: {} };

    function send(message) {
      if (frame.contentWindow) { frame.contentWindow.postMessage(message, sandboxOrigin); }
    }
    function reply(id, result) { send({ jsonrpc: "2.0", id: id, result: result }); }
    function fail(id, code, message) { send({ jsonrpc: "2.0", id: id, error: { code: code, message: message } }); }
    function request(method, params) {
      var id = "host-" + (state.nextId++);
      send({ jsonrpc: "2.0", id: id, method: method, params: params });
      return new Promise(function (resolve) { state.pending[id] = resolve; setTimeout(resolve, 3000); });
    }

    function hostContext() {
      var context = {
        theme: theme(), displayMode: "inline", availableDisplayModes: ["inline"], platform: "web",
        locale: navigator.language || "en", timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        userAgent: "llm_mcp", containerDimensions: { width: holder.clientWidth || 600, maxHeight: 2000 }
      };
      if (app.tool && isObject(app.tool.definition)) { context.toolInfo = { tool: app.tool.definition }; }
      return context;
    }

    var handlers = {
      "ui/initialize": function () {
        return {
          protocolVersion: PROTOCOL, hostInfo: HOST_INFO,
          hostCapabilities: { openLinks: {}, serverTools: {}, serverResources: {}, logging: {},
                              sandbox: { csp: app.csp || {}, permissions: app.permissions || {} } },
          hostContext: hostContext()
        };
      },
      "ping": function () { return {}; },
      "tools/call": function (params) {
        if (typeof params.name !== "string") { throw { code: -32602, message: "tools/call needs a name" }; }
        return post(holder.dataset.toolCallUrl, { name: params.name, arguments: isObject(params.arguments) ? params.arguments : {} });
      },
      "resources/read": function (params) {
        if (typeof params.uri !== "string") { throw { code: -32602, message: "resources/read needs a uri" }; }
        return post(holder.dataset.resourceUrl, { uri: params.uri });
      },
      "ui/message": function (params) {
        var text = textOf(params);
        var composer = document.getElementById("llm-mcp-composer");
        var box = composer && composer.querySelector("textarea[name=text]");
        if (!text || !box) { throw { code: -32000, message: "the chat cannot take this message" }; }
        box.value = text;
        if (composer.requestSubmit) { composer.requestSubmit(); } else { composer.submit(); }
        return {};
      },
      "ui/open-link": function (params) {
        var url;
        try { url = new URL(params.url); } catch (e) { throw { code: -32602, message: "not a URL" }; }
        if (url.protocol !== "http:" && url.protocol !== "https:") {
          throw { code: -32000, message: "only http and https links open" };
        }
        if (!window.confirm("The App asks to open " + url.href + "\nOpen it in a new tab?")) {
          throw { code: -32000, message: "the user declined" };
        }
        window.open(url.href, "_blank", "noopener,noreferrer");
        return {};
      },
      "ui/request-display-mode": function () { return { mode: "inline" }; },
      "ui/update-model-context": function () { return {}; }
    };

    function notified(m) {
      var params = isObject(m.params) ? m.params : {};
      if (m.method === "ui/notifications/sandbox-proxy-ready" && !state.ready) {
        state.ready = true;
        send({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready",
               params: { html: app.html, csp: app.csp || undefined, permissions: app.permissions || undefined } });
      } else if (m.method === "ui/notifications/initialized" && !state.initialized) {
        state.initialized = true;
        say("");
        send({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: app.input || {} } });
        if (isObject(app.result)) {
          send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: app.result });
        } else {
          send({ jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: { reason: "no result" } });
        }
      } else if (m.method === "ui/notifications/size-changed") {
        var height = Number(params.height);
        if (isFinite(height) && height > 0) { frame.style.height = Math.min(Math.ceil(height), 2000) + "px"; }
      }
    }

    window.addEventListener("message", function (event) {
      // Only this App's proxy, from the sandbox origin: anything else is ignored.
      if (event.source !== frame.contentWindow || event.origin !== sandboxOrigin) { return; }
      var m = event.data;
      if (!valid(m)) { return; }
      if (typeof m.method !== "string") {
        var resolve = state.pending[m.id];
        if (resolve) { delete state.pending[m.id]; resolve(m); }
        return;
      }
      if (!("id" in m)) { notified(m); return; }
      var handler = Object.prototype.hasOwnProperty.call(handlers, m.method) ? handlers[m.method] : null;
      if (!handler) { fail(m.id, -32601, "method not found: " + m.method); return; }
      if (m.method !== "ui/initialize" && m.method !== "ping" && !state.initialized) {
        fail(m.id, -32000, "send ui/notifications/initialized first"); return;
      }
      var params = isObject(m.params) ? m.params : {};
      Promise.resolve().then(function () { return handler(params); }).then(
        function (result) { reply(m.id, result); },
        function (error) {
          fail(m.id, typeof error.code === "number" ? error.code : -32000, error.message || String(error));
        });
    });

    function teardown() {
      if (state.initialized && frame.isConnected) { return request("ui/resource-teardown", { reason: "page closed" }); }
      return Promise.resolve();
    }
    holder.mcpAppTeardown = teardown;
    window.addEventListener("pagehide", teardown);
    holder.appendChild(frame);
  }

  function scan(root) {
    var found = (root.querySelectorAll ? root.querySelectorAll("[data-mcp-app]") : []);
    Array.prototype.forEach.call(found, mount);
  }
  scan(document);
  if (typeof MutationObserver === "function") {
    new MutationObserver(function (records) {
      records.forEach(function (record) {
        Array.prototype.forEach.call(record.addedNodes, function (node) {
          if (node.nodeType === 1) { if (node.matches("[data-mcp-app]")) { mount(node); } scan(node); }
        });
      });
    }).observe(document.body, { childList: true, subtree: true });
  }
})();
