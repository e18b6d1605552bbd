// @ts-check
// The outbox component's code (components/outbox.py), drawn in the sidebar on every run:
// it makes the page's outbox (js/outbox_core.js), gives it the component's state setter
// and data (the action route, the tab the server knows), and hears which redraw each run
// answers (the `outbox_answer` courier).
import {nwMail} from "./mail.js";
import {pageOutbox} from "./outbox_core.js";

/** @param {{setStateValue: (name: string, value: unknown) => void, data: unknown}} component */
export default function (component) {
  const core = pageOutbox();
  core.attach(component.setStateValue, component.data);
  nwMail.listen("outbox_answer", (data) => core.answer(data));
}
