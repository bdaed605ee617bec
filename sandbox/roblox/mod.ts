export * from "./messaging.ts";
export * from "./oauth.ts";
export * from "./oauth_test_client.ts";
