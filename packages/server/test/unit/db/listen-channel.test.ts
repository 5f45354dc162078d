import { describe, expect, it } from "vitest";
import { channelFor } from "../../../src/db/listen-channel.js";

describe("channelFor", () => {
  it("keeps the base name in the public schema and names the schema elsewhere", () => {
    expect(channelFor("parley_stream", "public")).toBe("parley_stream");
    expect(channelFor("parley_stream", "t_abc_12ef")).toBe("parley_stream_t_abc_12ef");
  });

  it("makes any schema name a plain identifier of at most 63 characters", () => {
    expect(channelFor("parley_stream", 'Team "A"; drop')).toBe("parley_stream_team__a___drop");
    expect(channelFor("parley_stream", "s".repeat(100))).toHaveLength(63);
  });
});
