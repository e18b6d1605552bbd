// @ts-check
// A courier: a component that carries data only (components/outbox.py's courier). Drawn
// with `data=` where a script works, it posts the data and its element to the code
// listening under its name (js/mail.js); every courier has this same code.
import {mailbox, nwMail} from "./mail.js";

/** @param {{name: string, data: unknown, parentElement: Element}} component */
export default function (component) {
  nwMail.post(mailbox(component.name), component.data, component.parentElement);
}
