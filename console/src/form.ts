/**
 * The input handler of a form held as one object of text fields in state:
 * `fieldOf(form, setForm)('title')` copies the typed value into `title`.
 */
export function fieldOf<T extends object>(
  form: T,
  setForm: (next: T) => void,
): (name: keyof T) => (event: Event) => void {
  return (name) => (event) =>
    setForm({ ...form, [name]: (event.target as HTMLInputElement).value });
}
