/** `text` as a URL when it is one of http or https, else `undefined` (never throws). */
export function httpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}
