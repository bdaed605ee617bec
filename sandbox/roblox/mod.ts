export * from "./messaging.ts";
