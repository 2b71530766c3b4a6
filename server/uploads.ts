/**
 * Multipart uploads (the CSV files, the logo): multer's memory storage, one file in one named field. multer
 * (with busboy) is loaded by the first upload, not at start-up (issue 16 item 5); its middleware and errors
 * are multer's own.
 */
import type { Request, Response } from 'express';
import type multer from 'multer';

export type UploadMiddleware = (req: Request, res: Response, done: (e?: unknown) => void) => void;

/** `multer({ storage: memoryStorage(), ...options }).single(field)`, made when first used. */
export function multipart(options: Omit<multer.Options, 'storage'>, field: string): UploadMiddleware {
  let made: Promise<UploadMiddleware> | undefined;
  return (req, res, done) => {
    made ??= import('multer').then(({ default: m }) => m({ ...options, storage: m.memoryStorage() }).single(field) as UploadMiddleware);
    made.then((upload) => upload(req, res, done), done);
  };
}
