import { isUuid } from '../../../ids.ts';

/** An id in a path: anything but a UUID cannot exist, so it answers 404 like an unknown id. */
export function isIdParam(id: string | undefined): id is string {
  return typeof id === 'string' && isUuid(id);
}
