/**
 * The bound on an LWT loop that meets other instances' Paxos rounds on one
 * partition. Within an instance such loops run one at a time per partition
 * (OneAtATime), so a hot partition sees at most one round per instance at a
 * time; what is left is instances beating each other, and each loss means
 * another instance's change went in. A loser pauses for a random time under
 * an exponential ceiling (full jitter: two losers rarely meet again) and
 * reads again, at most CONTENDED_ATTEMPTS times; past that the use case
 * answers CONFLICT (nothing changed, try again) instead of waiting for Paxos
 * to give up with a timeout.
 */
import { setTimeout as delay } from 'node:timers/promises';

/** LWT attempts of one change on a contended partition before it gives up (CONFLICT). */
export const CONTENDED_ATTEMPTS = 20;

/** The longest pause between two attempts, in ms. */
const PAUSE_CEILING_MS = 200;

/** A random pause under a ceiling that doubles from 10 ms with each attempt lost, up to PAUSE_CEILING_MS. */
export const contentionPauseMs = (attemptsLost: number): number =>
  Math.random() * Math.min(PAUSE_CEILING_MS, 10 * 2 ** Math.min(Math.max(attemptsLost, 1), 5));

/** Waits out contentionPauseMs(attemptsLost). */
export const pauseAfterLosing = (attemptsLost: number): Promise<void> => delay(contentionPauseMs(attemptsLost));
