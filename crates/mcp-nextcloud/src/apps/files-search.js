
{{ELEMENT}}

  function size(bytes) {
    if (typeof bytes !== "number") return "";
    var units = ["B", "KB", "MB", "GB", "TB"];
    var unit = 0;
    while (bytes >= 1024 && unit < units.length - 1) { bytes /= 1024; unit += 1; }
    return (unit === 0 ? bytes : bytes.toFixed(1)) + " " + units[unit];
  }

  function modified(mtime) {
    var date = new Date(mtime);
    if (isNaN(date.getTime())) return String(mtime || "");
    try {
      return new Intl.DateTimeFormat(window.tamebiContext.locale, {
        dateStyle: "medium", timeStyle: "short", timeZone: window.tamebiContext.timeZone
      }).format(date);
    } catch (error) {
      return String(mtime);
    }
  }

  window.tamebiRender = function (result) {
    var root = document.getElementById("files");
    root.textContent = "";
    var data = result.structuredContent;
    if (result.isError || !data || !Array.isArray(data.files)) {
      var text = (result.content || [])
        .filter(function (block) { return block && block.type === "text"; })
        .map(function (block) { return block.text; })
        .join("\n");
      root.appendChild(element("p", result.isError ? "error" : "note", text || "No result."));
      return;
    }
    if (data.files.length === 0) {
      root.appendChild(element("p", "note", "No files match."));
      return;
    }
    var table = element("table");
    var head = element("tr");
    ["Name", "Size", "Modified"].forEach(function (title) { head.appendChild(element("th", null, title)); });
    table.appendChild(head);
    data.files.forEach(function (file) {
      var row = element("tr");
      var folder = file.type === "folder";
      row.appendChild(element("td", "path", (folder ? "📁 " : "📄 ") + file.path));
      row.appendChild(element("td", "number", folder ? "" : size(file.size)));
      row.appendChild(element("td", "date", modified(file.mtime)));
      table.appendChild(row);
    });
    root.appendChild(table);
    if (data.truncated) {
      root.appendChild(element("p", "note", "More files match than are shown."));
    }
  };
