/**
 * The KV Connect data path messages, in protobuf, as the public protocol description defines them
 * (denoland/denokv, `proto/kv-connect.md` and `proto/schema/datapath.proto`): only the messages a
 * snapshot read and an atomic write need. Field numbers are the wire format; names are ours.
 */
import protobuf from "protobufjs";

const SCHEMA = `
syntax = "proto3";
package com.deno.kv.datapath;

message SnapshotRead { repeated ReadRange ranges = 1; }
message SnapshotReadOutput {
  repeated ReadRangeOutput ranges = 1;
  bool read_disabled = 2;
  bool read_is_strongly_consistent = 4;
  int32 status = 8;
}
message ReadRange { bytes start = 1; bytes end = 2; int32 limit = 3; bool reverse = 4; }
message ReadRangeOutput { repeated KvEntry values = 1; }
message AtomicWrite {
  repeated Check checks = 1;
  repeated Mutation mutations = 2;
  repeated Enqueue enqueues = 3;
}
message AtomicWriteOutput {
  int32 status = 1;
  bytes versionstamp = 2;
  repeated uint32 failed_checks = 4;
}
message Check { bytes key = 1; bytes versionstamp = 2; }
message Mutation { bytes key = 1; KvValue value = 2; int32 mutation_type = 3; int64 expire_at_ms = 4; }
message KvValue { bytes data = 1; int32 encoding = 2; }
message KvEntry { bytes key = 1; bytes value = 2; int32 encoding = 3; bytes versionstamp = 4; }
message Enqueue { bytes payload = 1; }
`;

const root = protobuf.parse(SCHEMA, { keepCase: true }).root;

/** Value encodings. */
export const Encoding = { V8: 1, LE64: 2, BYTES: 3 } as const;
/** Mutation types. */
export const MutationType = { SET: 1, DELETE: 2, SUM: 3, MAX: 4, MIN: 5 } as const;
/** Atomic write statuses. */
export const WriteStatus = { SUCCESS: 1, CHECK_FAILURE: 2 } as const;
/** Snapshot read status: success. */
export const READ_SUCCESS = 1;

export interface ReadRange {
  start: Uint8Array;
  end: Uint8Array;
  limit: number;
  reverse: boolean;
}
export interface KvEntry {
  key: Uint8Array;
  value: Uint8Array;
  encoding: number;
  versionstamp: Uint8Array;
}
export interface AtomicWrite {
  checks: Array<{ key: Uint8Array; versionstamp: Uint8Array }>;
  mutations: Array<{
    key: Uint8Array;
    value?: { data: Uint8Array; encoding: number };
    mutation_type: number;
    expire_at_ms: number | { toNumber(): number };
  }>;
  enqueues: unknown[];
}

function codec<T>(name: string) {
  const type = root.lookupType(`com.deno.kv.datapath.${name}`);
  return {
    decode: (bytes: Uint8Array): T =>
      type.toObject(type.decode(bytes), { defaults: true, arrays: true }) as T,
    encode: (value: Record<string, unknown>): Uint8Array =>
      type.encode(type.fromObject(value)).finish(),
  };
}

/** Codecs of the request and answer of each data path call. */
export const messages = {
  snapshotRead: codec<{ ranges: ReadRange[] }>("SnapshotRead"),
  snapshotReadOutput: codec<never>("SnapshotReadOutput"),
  atomicWrite: codec<AtomicWrite>("AtomicWrite"),
  atomicWriteOutput: codec<never>("AtomicWriteOutput"),
};
