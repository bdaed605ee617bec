/** The privacy page the linking page links to: what a player's link keeps, for whom, how long. */
import type { VNode } from "preact";

/** The privacy page body. */
export function PrivacyPage({ serviceName }: { serviceName: string }): VNode {
  return (
    <main>
      <h1>Privacy on {serviceName}'s wallet-linking pages</h1>
      <p>
        {serviceName}{" "}
        runs the wallet-linking page for each game that uses it. The game's developer decides what
        the game does with a linked wallet; {serviceName} only keeps what linking needs.
      </p>
      <h2>What is kept</h2>
      <ul>
        <li>
          Your Roblox user ID and the Solana wallet address you linked, with the time you linked it,
          for as long as the wallet stays linked. Unlinking removes them.
        </li>
        <li>
          The game is told when you link or unlink (your user ID and the wallet address); these
          notices are kept for 7 days.
        </li>
        <li>
          While you are signed in (one hour at most), your browser holds a signed cookie with your
          Roblox user ID, username, display name and avatar, to show you who is signed in. They are
          not stored on our servers.
        </li>
      </ul>
      <h2>What is never asked for or kept</h2>
      <ul>
        <li>Your Roblox password: you sign in on Roblox's own page.</li>
        <li>
          Your wallet's recovery phrase (seed phrase) or private key. Linking asks your wallet app
          to sign a short message, which is free and sends nothing. Anyone asking for your recovery
          phrase is trying to steal your wallet.
        </li>
      </ul>
    </main>
  );
}
