// Reads an MCAP file from start to end with the reference TypeScript
// library's stream reader, @mcap/core's McapStreamReader, chunk CRCs
// checked: the way to read a file that has no summary or footer (a
// recorder killed, or stopped by a full disk with no room left for them).
// Prints what it found as one JSON object, in read.mjs's shape, with
// "complete": whether the file ended with its footer.
import { readFile } from "node:fs/promises";
import { McapStreamReader } from "@mcap/core";
import { decompress } from "fzstd";

const reader = new McapStreamReader({
  validateCrcs: true,
  decompressHandlers: { zstd: (data, size) => decompress(data, new Uint8Array(Number(size))) },
});
reader.append(await readFile(process.argv[2]));
const channels = new Map();
const out = { profile: "", library: "", messageCount: 0, complete: false, channels: [], messages: [], metadata: {} };
for (let rec; (rec = reader.nextRecord()); ) {
  switch (rec.type) {
    case "Header":
      out.profile = rec.profile;
      out.library = rec.library;
      break;
    case "Channel":
      if (!channels.has(rec.id)) {
        channels.set(rec.id, rec);
        out.channels.push({ topic: rec.topic, encoding: rec.messageEncoding });
      }
      break;
    case "Message":
      out.messageCount++;
      out.messages.push({
        topic: channels.get(rec.channelId).topic,
        logTime: rec.logTime.toString(),
        data: Buffer.from(rec.data).toString("base64"),
      });
      break;
    case "Metadata":
      out.metadata[rec.name] = Object.fromEntries(rec.metadata);
      break;
  }
}
out.complete = reader.done();
console.log(JSON.stringify(out));
