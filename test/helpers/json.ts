/**
 * Parsed JSON as the tests read it: navigated field by field (`body.data.items[0].call_id`), with
 * the assertions checking the shape. The one place tests opt out of typing.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type Json = any;
