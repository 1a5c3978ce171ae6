import { notFound } from '../../errors.ts';
import { isUuid } from '../../ids.ts';

/** Path ids: anything that is not a UUID cannot exist, so it is a 404 like an unknown UUID. */
export function pathId(value: string, what: string): string {
  if (!isUuid(value)) throw notFound(`No ${what} ${value}.`);
  return value.toLowerCase();
}
