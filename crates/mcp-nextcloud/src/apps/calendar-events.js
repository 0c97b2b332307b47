  var COLOR = /^#[0-9a-fA-F]{3,8}$/;

{{ELEMENT}}

  function dayTitle(day) {
    // The date part of the event's own start, named without shifting it.
    var date = new Date(day + "T12:00:00Z");
    if (isNaN(date.getTime())) return day;
    try {
      return new Intl.DateTimeFormat(window.tamebiContext.locale, {
        weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC"
      }).format(date);
    } catch (error) {
      return day;
    }
  }

  function clock(time) {
    return typeof time === "string" && time.length >= 16 ? time.slice(11, 16) : "";
  }

  function when(occurrence) {
    if (occurrence.all_day) {
      return occurrence.end && occurrence.end !== occurrence.start
        ? "all day, until " + occurrence.end
        : "all day";
    }
    var start = clock(occurrence.start);
    var end = clock(occurrence.end);
    var endDay = String(occurrence.end || "").slice(0, 10);
    var sameDay = endDay === String(occurrence.start).slice(0, 10);
    return start + "–" + (sameDay ? end : endDay + " " + end);
  }

  function showText(root, result, className) {
    var text = (result.content || [])
      .filter(function (block) { return block && block.type === "text"; })
      .map(function (block) { return block.text; })
      .join("\n");
    root.appendChild(element("p", className, text || "No result."));
  }

  window.tamebiRender = function (result) {
    var root = document.getElementById("agenda");
    root.textContent = "";
    var data = result.structuredContent;
    if (result.isError || !data || !Array.isArray(data.occurrences)) {
      showText(root, result, result.isError ? "error" : "note");
      return;
    }
    if (data.occurrences.length === 0) {
      root.appendChild(element("p", "note", "No events in this period."));
    }
    var list = null;
    var currentDay = null;
    data.occurrences.forEach(function (occurrence) {
      var day = String(occurrence.start).slice(0, 10);
      if (day !== currentDay) {
        currentDay = day;
        root.appendChild(element("h2", null, dayTitle(day)));
        list = element("ol");
        root.appendChild(list);
      }
      var item = element("li");
      var calendar = occurrence.calendar || {};
      if (typeof calendar.color === "string" && COLOR.test(calendar.color)) {
        item.style.borderLeftColor = calendar.color;
      }
      var timeZone = occurrence.time_zone ? " (" + occurrence.time_zone + ")" : "";
      item.appendChild(element("div", "when", when(occurrence) + timeZone));
      item.appendChild(element("div", "summary", occurrence.summary || "(untitled)"));
      var details = [];
      if (occurrence.location) details.push(occurrence.location);
      details.push(calendar.name || calendar.uri || "");
      if (occurrence.recurring) details.push("recurring");
      if (occurrence.status === "cancelled") details.push("cancelled");
      item.appendChild(element("div", "detail", details.filter(Boolean).join(" · ")));
      if (occurrence.description) item.appendChild(element("div", "detail", occurrence.description));
      list.appendChild(item);
    });
    if (data.truncated) {
      root.appendChild(element("p", "note", "More events exist in this period than are shown."));
    }
  };
