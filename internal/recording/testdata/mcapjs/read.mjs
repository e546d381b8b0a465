// Reads an MCAP file with the reference TypeScript library, @mcap/core,
// through its summary and indexes, and prints what it found as one JSON
// object, for robotexec's Go tests to compare with what they recorded.
import { open } from "node:fs/promises";
import { McapIndexedReader } from "@mcap/core";
import { decompress } from "fzstd";

const file = await open(process.argv[2], "r");
const readable = {
  size: async () => BigInt((await file.stat()).size),
  read: async (offset, size) => {
    const buf = new Uint8Array(Number(size));
    await file.read(buf, 0, Number(size), Number(offset));
    return buf;
  },
};
const reader = await McapIndexedReader.Initialize({
  readable,
  decompressHandlers: { zstd: (data, size) => decompress(data, new Uint8Array(Number(size))) },
});
const out = {
  profile: reader.header.profile,
  library: reader.header.library,
  messageCount: Number(reader.statistics.messageCount),
  chunkCount: reader.statistics.chunkCount,
  channels: [...reader.channelsById.values()].map((c) => ({ topic: c.topic, encoding: c.messageEncoding })),
  messages: [],
  metadata: {},
};
for await (const m of reader.readMessages({ validateCrcs: true })) {
  const c = reader.channelsById.get(m.channelId);
  out.messages.push({
    topic: c.topic,
    logTime: m.logTime.toString(),
    data: Buffer.from(m.data).toString("base64"),
  });
}
for await (const m of reader.readMetadata()) {
  out.metadata[m.name] = Object.fromEntries(m.metadata);
}
await file.close();
console.log(JSON.stringify(out));
