/** PostgreSQL migrations, in order. Append new ones; never edit one that has shipped. */
import { Init1732300000000 } from './1732300000000-init.js';

export const postgresMigrations = [Init1732300000000];
