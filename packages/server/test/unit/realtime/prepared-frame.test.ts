import { describe, expect, it } from "vitest";
import { prepareTextFrame } from "../../../src/realtime/prepared-frame.js";

describe("prepareTextFrame", () => {
  it.each([
    [5, [0x81, 5]],
    [125, [0x81, 125]],
    [126, [0x81, 126, 0, 126]],
    [65_535, [0x81, 126, 0xff, 0xff]],
    [65_536, [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0]],
  ])("frames %i bytes as one unmasked final text frame", (size, header) => {
    const frame = prepareTextFrame("x".repeat(size));
    expect([...frame.wire.subarray(0, header.length)]).toEqual(header);
    expect(frame.length).toBe(size);
    expect(frame.wire.length).toBe(header.length + size);
  });

  it("counts UTF-8 bytes, not characters", () => {
    const frame = prepareTextFrame("zoë ✓");
    expect(frame.length).toBe(Buffer.byteLength("zoë ✓"));
    expect(frame.wire.subarray(2).toString()).toBe("zoë ✓");
  });
});
