/** A chain cluster a project is bound to. */
export type Cluster = "devnet" | "mainnet";
