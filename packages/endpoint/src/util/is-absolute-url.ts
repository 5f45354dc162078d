// A scheme followed by "//": http://, https://, ws://, ...
const ABSOLUTE = /^[A-Za-z][A-Za-z\d+.-]*:\/\//;

export function isAbsoluteUrl(url: string): boolean {
  return ABSOLUTE.test(url);
}
