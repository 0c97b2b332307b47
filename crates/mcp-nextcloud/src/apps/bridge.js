// The view side of MCP Apps (SEP-1865): JSON-RPC 2.0 over postMessage with
// the host. The view calls ui/initialize, applies the host context (theme,
// style variables, locale, time zone), confirms with ui/notifications/initialized, and
// then hands every ui/notifications/tool-result to window.tamebiRender.
// Nothing here fetches, evaluates or injects markup.
(function () {
  "use strict";
  var PROTOCOL_VERSION = "2026-01-26";
  var nextId = 1;
  var pending = {};
  var context = { locale: undefined, timeZone: undefined, theme: undefined };
  window.tamebiContext = context;

  function post(message) {
    window.parent.postMessage(message, "*");
  }

  function request(method, params) {
    var id = nextId++;
    return new Promise(function (resolve, reject) {
      pending[id] = { resolve: resolve, reject: reject };
      post({ jsonrpc: "2.0", id: id, method: method, params: params });
    });
  }

  function notify(method, params) {
    post({ jsonrpc: "2.0", method: method, params: params || {} });
  }

  function answer(id, result) {
    post({ jsonrpc: "2.0", id: id, result: result });
  }

  function applyContext(hostContext) {
    if (!hostContext || typeof hostContext !== "object") return;
    var root = document.documentElement;
    if (hostContext.theme === "light" || hostContext.theme === "dark") {
      context.theme = hostContext.theme;
      root.setAttribute("data-theme", hostContext.theme);
      root.style.colorScheme = hostContext.theme;
    }
    if (typeof hostContext.locale === "string") context.locale = hostContext.locale;
    if (typeof hostContext.timeZone === "string") context.timeZone = hostContext.timeZone;
    var variables = hostContext.styles && hostContext.styles.variables;
    if (variables && typeof variables === "object") {
      Object.keys(variables).forEach(function (name) {
        var value = variables[name];
        // Only CSS custom properties, and only plain values.
        if (/^--[a-z0-9-]+$/.test(name) && typeof value === "string" && !/[;{}<>]/.test(value)) {
          root.style.setProperty(name, value);
        }
      });
    }
  }

  function reportSize() {
    var root = document.documentElement;
    notify("ui/notifications/size-changed", {
      width: Math.ceil(root.scrollWidth),
      height: Math.ceil(root.scrollHeight)
    });
  }

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) return;
    var message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined) {
      var waiting = pending[message.id];
      if (!waiting) return;
      delete pending[message.id];
      if (message.error) waiting.reject(message.error);
      else waiting.resolve(message.result);
      return;
    }
    switch (message.method) {
      case "ui/notifications/tool-result":
        if (typeof window.tamebiRender === "function") window.tamebiRender(message.params || {});
        reportSize();
        break;
      case "ui/notifications/tool-cancelled":
        if (typeof window.tamebiRender === "function") {
          window.tamebiRender({ isError: true, content: [{ type: "text", text: "Cancelled." }] });
        }
        reportSize();
        break;
      case "ui/notifications/host-context-changed":
        applyContext(message.params);
        break;
      case "ui/resource-teardown":
      case "ping":
        answer(message.id, {});
        break;
      default:
        if (message.id !== undefined) {
          post({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
        }
    }
  });

  request("ui/initialize", {
    appInfo: { name: "tamebi-" + document.documentElement.getAttribute("data-app"), version: "1" },
    appCapabilities: { availableDisplayModes: ["inline"] },
    protocolVersion: PROTOCOL_VERSION
  }).then(function (result) {
    applyContext(result && result.hostContext);
    notify("ui/notifications/initialized", {});
    reportSize();
  }, function () {
    // A host that refuses the handshake gets a static page.
  });

  if (typeof ResizeObserver === "function") {
    new ResizeObserver(reportSize).observe(document.body);
  }
})();
