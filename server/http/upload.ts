import type { RequestHandler } from 'express';
import multer from 'multer';
import { UPLOAD_LIMIT_BYTES } from '../lib/limits';
import { type ApiError, errors } from './errors';

/**
 * Runs a multer middleware and turns its errors into the catalog's: a limit multer names by its
 * `LIMIT_*` code goes through `onLimit`; anything else (a broken part, a missing boundary, a body cut
 * short, which busboy reports without a code) is 400 `invalid multipart body`, never a 500.
 */
export function withCatalogErrors(
  parse: RequestHandler,
  onLimit: (code: string) => ApiError,
): RequestHandler {
  return (req, res, next) => {
    parse(req, res, (err: unknown) => {
      if (!err) return next();
      const code = (err as { code?: unknown }).code;
      next(
        typeof code === 'string' && code.startsWith('LIMIT_')
          ? onLimit(code)
          : errors.badRequest('invalid multipart body'),
      );
    });
  };
}

/**
 * One multipart file in memory (logos, avatars), at most UPLOAD_LIMIT_BYTES: 413 naming the upload
 * limit, 400 for any other malformed body. Callers check the content by its magic bytes, never by the
 * declared type.
 */
export function singleFileUpload(field = 'file'): RequestHandler {
  const single = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: UPLOAD_LIMIT_BYTES, files: 1, fields: 10 },
  }).single(field);
  return withCatalogErrors(single, (code) =>
    code === 'LIMIT_FILE_SIZE'
      ? errors.payloadTooLarge(UPLOAD_LIMIT_BYTES)
      : errors.badRequest(`invalid multipart body: one field named ${field} expected`),
  );
}

/** Text fields of a multipart form and no files (public webhooks), at most `maxFields` of them. */
export function formFieldsOnly(maxFields: number): RequestHandler {
  const none = multer({ limits: { fileSize: 0, files: 0, fields: maxFields } }).none();
  return withCatalogErrors(none, (code) => {
    if (code === 'LIMIT_FIELD_COUNT')
      return errors.badRequest(`invalid multipart body: at most ${maxFields} fields`);
    if (code.startsWith('LIMIT_FILE') || code === 'LIMIT_UNEXPECTED_FILE')
      return errors.badRequest('invalid multipart body: files are not accepted');
    return errors.badRequest('invalid multipart body');
  });
}
