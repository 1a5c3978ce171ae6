import { CALL_COMMANDS } from './call-commands.ts';
import type { Command } from './command.ts';
import { PROVISIONING_COMMANDS } from './commands.ts';
import { DEMO_COMMANDS } from './demo-commands.ts';
import { EXPORT_COMMANDS } from './export-command.ts';
import { LISTEN_COMMANDS } from './listen.ts';

/**
 * Every `callcap` command except `serve`, in the order `callcap help` lists them. A new module of
 * commands (e.g. src/cli/listen.ts exporting LISTEN_COMMANDS) is one more spread in this array; its
 * topic line below is optional (topics are the first word of multi-word commands).
 */
export const COMMANDS: Command[] = [
  ...PROVISIONING_COMMANDS,
  ...CALL_COMMANDS,
  ...DEMO_COMMANDS,
  ...EXPORT_COMMANDS,
  ...LISTEN_COMMANDS,
];

/** What `callcap <topic> --help` says the topic is about. */
export const TOPICS: Record<string, string> = {
  org: 'organizations (operator API)',
  user: "an organization's users (operator API)",
  key: 'API keys (operator API)',
  tracker: 'keyword trackers (operator API)',
  contact: 'contacts (operator API)',
  telephony: "an organization's Twilio account (operator API)",
  number: 'phone numbers (operator API)',
  call: 'calls: ingestion, lifecycle, deletion, reprocessing, outbound (operator API)',
  demo: 'the demo organization of the first start on the embedded database (operator API)',
};
