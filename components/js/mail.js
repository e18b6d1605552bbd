// The mail between a page's components. A key script's code is loaded by a component of
// its own whose element never changes (Streamlit sends an element it sent before by
// reference, so the code crosses the wire once per tab); the page's data, new every run,
// travels in a small courier component drawn where the script works, which posts it here.
//   nwMail.post(name, data, element)   the courier: the latest data and its element
//   nwMail.listen(name, fn)            the code: fn(data, element) now, if data came before
//                                      it loaded, and for every later post
const nwMail = (() => {
  const root = typeof window === "undefined" ? {} : window;
  if (root.__nwMail) return root.__nwMail;
  const boxes = {};
  const box = (name) => boxes[name] || (boxes[name] = {data: undefined, element: null, to: null});
  const api = {
    post(name, data, element) {
      const b = box(name);
      b.data = data;
      b.element = element;
      if (b.to) b.to(data, element);
    },
    listen(name, fn) {
      const b = box(name);
      b.to = fn;
      if (b.data !== undefined) fn(b.data, b.element);
    },
  };
  root.__nwMail = api;
  return api;
})();
