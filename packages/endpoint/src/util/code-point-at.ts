/**
 * The code point starting at `index` and how many UTF-16 units it spans (2 for a valid surrogate
 * pair, else 1; a lone surrogate is returned as itself).
 */
export function codePointAt(text: string, index: number): [codePoint: number, units: 1 | 2] {
  const unit = text.charCodeAt(index);
  if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
    const next = text.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) {
      return [(unit - 0xd800) * 0x400 + (next - 0xdc00) + 0x10000, 2];
    }
  }
  return [unit, 1];
}
