/*
 * resource.pml: multi-resource acquisition (executor/resource.go, seed 002).
 * A request is queued on its lowest resource; at the head of a resource's
 * queue it holds it and goes on to the next; holding the highest, its
 * callback runs. Each resource's queue, with its lock, is one step.
 */

/* Executor.forward: queue e's request on its next resource (with ah, take
 * that one as held already and go to the one after), while it reaches the
 * head; ok says whether it holds every resource. */
inline forward(e, ah, ok, rr) {
	ok = 0;
	do
	:: true ->
		if
		:: ah ->
			anext[e]++;
			if
			:: anext[e] == nres[e] -> adone[e] = 1; ok = 1; break
			:: else
			fi
		:: else
		fi;
		rr = RES(e, anext[e]);
		atomic {
			rq[rr]!e;
			ah = (len(rq[rr]) == 1);
			EV(Request, e);
			if
			:: ah -> EV(Acquire, e)
			:: else
			fi
		}
		if
		:: !ah -> break
		:: else
		fi
	od
}

/* Executor.acquire: a new request for x's resources. */
inline acquire() {
	atomic { anext[x] = 0; adone[x] = 0; atHead = 0 }
	forward(x, atHead, ok, r)
}

/* Executor.release: x's request leaves the head of each of its queues; a
 * request that reaches a head goes on, and one that then holds all it needs
 * goes on this worker's runnable list. */
inline release() {
	atomic { adone[x] = 0; i = 0 }
	do
	:: i < nres[x] ->
		atomic {
			r = RES(x, i);
			i++;
			rq[r]?<z>;
			assert(z == x);
			z = 0;
			rq[r]?_;
			holder[r] = NONE;
			EV(Release, x);
			nx = NONE;
			if
			:: len(rq[r]) > 0 -> rq[r]?<nx>; EV(Acquire, nx)
			:: else
			fi
		}
		if
		:: nx != NONE ->
			atHead2 = 1;
			forward(nx, atHead2, ok2, r2);
			if
			:: ok2 ->
				atomic {
					runnable[me]!nx;
					if
					:: isTimer(nx) -> due[nx] = 1; seenBy[nx] = 0
					:: else
					fi
				}
			:: else
			fi
		:: else
		fi
	:: else -> break
	od
}
