import type { Deps } from '../deps.ts';

/** First run on an empty embedded database: demo organization and calls. Returns the text to print. */
export async function seedDemoIfEmpty(_deps: Deps): Promise<string | null> {
  return null;
}
