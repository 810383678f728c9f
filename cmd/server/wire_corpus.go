package main

// The corpus domain: notes, their URIs and row trigger, the vault
// import, admin search, and the corpus.index subscriber.

import (
	"github.com/google/wire"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/vaultimport"
	"github.com/standmeet/standmeet/internal/adapters/postgres/corpusdb"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/corpus"
)

// CorpusSet provides the corpus domain, its index worker and the vault
// import; the indexer reads through the same unit of work as the service.
var CorpusSet = wire.NewSet(
	provideCorpusUnitOfWork,
	wire.Bind(new(corpus.UnitOfWork), new(*uow.UnitOfWork[corpus.Tx])),
	corpus.NewService,
	corpus.NewIndexer,
	wire.Struct(new(riverjob.CorpusIndexWorker), "Indexer"),
	provideVaultImport,
)

// corpusIndexSubscriber subscribes corpus.index to corpus.note.changed, as
// the corpus domain declares it.
func corpusIndexSubscriber() subscriber {
	return subscriber{Kind: corpus.IndexSubscriberName, Globs: corpus.IndexSubscriberGlobs(), Queue: riverjob.QueueCorpus}
}

func provideCorpusUnitOfWork(pool *pgxpool.Pool, rec uow.Recorder) *uow.UnitOfWork[corpus.Tx] {
	return corpusdb.NewUnitOfWork(pool, rec)
}

func provideVaultImport(svc *corpus.Service, auth httpapi.Authenticator, logger *zap.Logger) *vaultimport.Mounter {
	return vaultimport.New(auth, svc.Import, logger.Named("vault"))
}
