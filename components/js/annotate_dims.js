// The annotate page's dimension keys, for annotateKeys (js/annotate_keys.js), which
// loads this first and calls annotateDims(S, toggled) on its state: Q then a dimension
// then its option, W walking the dimensions one key each, V taking the file's values,
// Q 7 opening the category list; what option each dimension holds counting the actions
// the page has not drawn yet (`toggled`: the value a toggle action leaves). Each
// dimension in the page's data (`dims`, needlework.grounding.keymap) is {title, fields,
// options, values}. No data is ever put into HTML here.
function annotateDims(S, toggled) {
  S.dims = () => (S.data && S.data.dims) || [];
  S.prefixText = () => {
    if (S.prefix.walk !== undefined) {
      const k = S.prefix.walk;
      const d = S.dims()[k];
      const file = S.fileChoice(k);
      return `${d.title} (${k + 1}/${S.dims().length}): ` +
        d.options.map((o, i) => `${i + 1} ${o}`).join(" · ") +
        (file === null ? "" : ` · Enter: the file's (${d.options[file]})`) +
        " · Space: leave · 0 clear · Esc";
    }
    if (S.prefix.dim === undefined) {
      return "Q: " + S.dims().map((d, i) => `${i + 1} ${d.title}`).join(" · ") +
        ` · ${S.dims().length + 1} Category · Esc`;
    }
    const d = S.dims()[S.prefix.dim];
    return `${d.title}: ` + d.options.map((o, i) => `${i + 1} ${o}`).join(" · ") + " · 0 clear";
  };
  // a dimension's actions the page's data may not show yet, in order
  S.dimActions = (d) => nwCore.overlay((a) => a.kind === "set" && a.item === S.item &&
    S.data && a.dataset === S.data.dataset && d.fields.some((f) => a.field === "dim:" + f));
  // the option a dimension holds: the saved values, then those actions (an option's ""
  // matches any value of its field, as needlework.grounding.keymap.choice_of)
  S.dimChoice = (k) => {
    const d = S.dims()[k];
    if (!d || !S.data) return null;
    const saved = S.data.item === S.item ? S.data.dimValues || {} : {};
    const got = d.fields.map((f) => (("dim:" + f) in saved ? saved["dim:" + f] : null));
    for (const a of S.dimActions(d)) {
      const i = d.fields.indexOf(a.field.slice(4));
      got[i] = toggled(got[i], a);
    }
    const found = d.values.findIndex((want) => want.every((w, i) => w === "" || w === got[i]));
    return found < 0 ? null : found;
  };
  // the option the file's own values amount to (only when the page may show them)
  S.fileChoice = (k) => {
    const d = S.dims()[k];
    if (!d || !S.data || S.data.item !== S.item) return null;
    const file = S.data.fileDims || {};
    const got = d.fields.map((f) => file["dim:" + f] || null);
    if (got.every((v) => v === null)) return null;
    const found = d.values.findIndex((want) => want.every((w, i) => w === "" || w === got[i]));
    return found < 0 ? null : found;
  };
  S.takeFile = () => {  // V: the file's value of every dimension not set yet
    if (S.data.item !== S.item) return;
    let n = 0;
    S.dims().forEach((d, k) => {
      const file = S.fileChoice(k);
      if (file !== null && S.dimChoice(k) === null) { S.setDim(d, file, true); n += 1; }
    });
    const field = "dim:question_category";
    const file = (S.data.fileDims || {})[field];
    const mine = (S.data.dimValues || {})[field] || nwCore.overlay((a) => a.kind === "set" &&
      a.item === S.item && a.field === field).length;
    if (file && !mine) {
      nwCore.push({kind: "set", dataset: S.data.dataset, item: S.item, annotator: S.who(),
                   field, value: file});
      n += 1;
    }
    S.say(Object.keys(S.data.fileDims || {}).length ?
      `took the file's value of ${n} dimension(s) you had not set` :
      "the file's values are hidden or absent here: nothing taken");
  };
  S.category = () => {  // Q 7: open the category list (type to filter, Enter chooses)
    const box = document.querySelector(`${nwDom.key("nw-category")} input`);
    if (!box || box.disabled) return;
    box.scrollIntoView({block: "center"});
    box.focus();
    const open = document.querySelector(`${nwDom.key("nw-category")} ${nwDom.SELECT_OPEN}`);
    // after the key's own events (react-aria opens the list on a press of its button)
    setTimeout(() => { if (open) open.click(); else box.click(); }, 0);
  };
  S.setDim = (d, option, quiet = false) => {
    const values = option === null ? d.fields.map(() => null) : d.values[option];
    d.fields.forEach((f, k) => nwCore.push({kind: "set", dataset: S.data.dataset, item: S.item,
      annotator: S.who(), field: "dim:" + f, value: values[k]}));
    if (!quiet) S.say(`${d.title}: ${option === null ? "cleared" : d.options[option]}`);
  };

  // W: one key per dimension, in order (any other key stops the walk, then acts)
  S.walkKey = (key) => {
    const digit = /^[0-9]$/.test(key) ? parseInt(key, 10) : null;
    const k = S.prefix.walk;
    const d = S.dims()[k];
    if (digit === null && key !== "enter" && key !== " ") {
      S.prefix = null;
      S.paint();
      S.handle(key);
      return;
    }
    if (digit === 0) S.setDim(d, null);
    else if (digit && digit <= d.options.length) S.setDim(d, digit - 1);
    else if (key === "enter" && S.fileChoice(k) !== null) S.setDim(d, S.fileChoice(k));
    else if (digit) { S.say(`${d.title} has ${d.options.length} options`); return; }
    S.prefix.walk = k + 1;
    if (S.prefix.walk >= S.dims().length) { S.prefix = null; S.say("dimensions done"); }
    S.paint();
  };
  // Q, then a dimension, then its option
  S.dimKey = (key) => {
    const digit = /^[0-9]$/.test(key) ? parseInt(key, 10) : null;
    if (S.prefix.dim === undefined) {
      if (digit && digit <= S.dims().length) S.prefix.dim = digit - 1;
      else { S.prefix = null; if (digit === S.dims().length + 1) S.category(); }
    } else {
      const d = S.dims()[S.prefix.dim];
      if (digit === 0) S.setDim(d, null);
      else if (digit && digit <= d.options.length) S.setDim(d, digit - 1);
      S.prefix = null;
    }
    S.paint();
  };
}
