/**
 * The SDK's event and analysis types (sdk/src/webhooks) are tested EQUAL to the server's single
 * source: the zod schemas of the event catalogue (src/webhooks/outbox/event-schemas.ts and
 * processedAnalysisSchema), which also type the payload builders and generate the OpenAPI `webhooks`
 * section. "Equal" is type identity, not mere assignability: a key added, dropped, made optional or
 * given another type on either side breaks the build. The checks below are compiled by
 * `npm run typecheck`, and the test compiles this file on its own with tsc, so running the contract
 * tests alone catches a drift too.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import type { z } from 'zod';
import type * as Sdk from '../../sdk/src/webhooks/index.ts';
import type { ProcessedAnalysis, processedAnalysisSchema } from '../../src/domain/analysis.ts';
import type {
  contactDiffSchema,
  contactSchema,
  EVENT_DATA_SCHEMAS,
  EVENT_ENVELOPE_SCHEMAS,
  FAILED_OUTBOUND_LIFECYCLES,
  FINAL_OUTBOUND_LIFECYCLES,
  trackerMatchSchema,
  verificationHandshakeSchema,
} from '../../src/webhooks/outbox/event-schemas.ts';
import type { EventType } from '../../src/webhooks/outbox/event-types.ts';

/** true when A and B are identical types (not merely assignable one way or both ways). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Out<S extends z.ZodType> = z.output<S>;

/** Every entry must be `true`; a `false` is a compile error naming the type that drifted. */
const checks: {
  eventTypes: Equal<Sdk.WebhookEventType, EventType>;
  analysis: Equal<Sdk.ProcessedAnalysis, Out<typeof processedAnalysisSchema>>;
  proposalItem: Equal<
    NonNullable<Sdk.ProcessedAnalysis['proposal_items']>[number],
    NonNullable<Out<typeof processedAnalysisSchema>['proposal_items']>[number]
  >;
  contact: Equal<Sdk.Contact, Out<typeof contactSchema>>;
  contactDiff: Equal<Sdk.ContactDiff, Out<typeof contactDiffSchema>>;
  trackerMatch: Equal<Sdk.TrackerMatch, Out<typeof trackerMatchSchema>>;
  finalLifecycle: Equal<Sdk.FinalOutboundLifecycle, (typeof FINAL_OUTBOUND_LIFECYCLES)[number]>;
  failedLifecycle: Equal<Sdk.FailedOutboundLifecycle, (typeof FAILED_OUTBOUND_LIFECYCLES)[number]>;
  handshake: Equal<Sdk.VerificationHandshake, Out<typeof verificationHandshakeSchema>>;
  data: { [T in EventType]: Equal<Sdk.WebhookEventDataMap[T], Out<(typeof EVENT_DATA_SCHEMAS)[T]>> };
  envelope: { [T in EventType]: Equal<Sdk.WebhookEventOf<T>, Out<(typeof EVENT_ENVELOPE_SCHEMAS)[T]>> };
  /** What this server writes must satisfy the contract it publishes. */
  serverAnalysisFitsContract: ProcessedAnalysis extends Out<typeof processedAnalysisSchema> ? true : false;
} = {
  eventTypes: true,
  analysis: true,
  proposalItem: true,
  contact: true,
  contactDiff: true,
  trackerMatch: true,
  finalLifecycle: true,
  failedLifecycle: true,
  handshake: true,
  data: {
    'call.completed': true,
    'call.outbound.attempted': true,
    'call.recording.ready': true,
    'call.transcribed': true,
    'call.failed': true,
    'call.outbound.lifecycle_repaired': true,
    'call.deletion_scheduled': true,
    'call.recording.deleted': true,
    'call.followup_email.drafted': true,
    'call.tracker.matched': true,
    'contact.created': true,
    'contact.updated': true,
    'webhook.test': true,
  },
  envelope: {
    'call.completed': true,
    'call.outbound.attempted': true,
    'call.recording.ready': true,
    'call.transcribed': true,
    'call.failed': true,
    'call.outbound.lifecycle_repaired': true,
    'call.deletion_scheduled': true,
    'call.recording.deleted': true,
    'call.followup_email.drafted': true,
    'call.tracker.matched': true,
    'contact.created': true,
    'contact.updated': true,
    'webhook.test': true,
  },
  serverAnalysisFitsContract: true,
};

const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** tsc over one file with the project's compiler options; its diagnostics, or '' when it compiles. */
function compile(file: string): { status: number | null; output: string } {
  const r = spawnSync(
    process.execPath,
    [
      tsc,
      '--noEmit',
      '--pretty',
      'false',
      '--target',
      'es2024',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--lib',
      'es2024',
      '--types',
      'node',
      '--strict',
      '--allowImportingTsExtensions',
      '--verbatimModuleSyntax',
      '--skipLibCheck',
      file,
    ],
    { cwd: root, encoding: 'utf8', timeout: 120_000 },
  );
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

test('the SDK’s event and analysis types are identical to the server’s catalogue schemas (compiled)', () => {
  assert.ok(Object.values(checks).every((v) => v === true || Object.values(v).every((x) => x === true)));
  const { status, output } = compile(join(root, 'test/contracts/sdk-types.test.ts'));
  assert.equal(status, 0, `the SDK types drifted from src/webhooks/outbox/event-schemas.ts:\n${output}`);
});
