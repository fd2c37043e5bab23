package instrument

import "github.com/gofault/gofault/catalog"

// localize returns cat with site files in the module cache moved to the
// work dir's copies of their modules.
func localize(cat *catalog.Catalog, w *Work) *catalog.Catalog {
	c := *cat
	c.Sites = append([]catalog.Site(nil), cat.Sites...)
	for i := range c.Sites {
		c.Sites[i].File = w.CopyPath(c.Sites[i].File)
	}
	c.TimeoutPoints = append([]catalog.TimeoutPoint(nil), cat.TimeoutPoints...)
	for i := range c.TimeoutPoints {
		c.TimeoutPoints[i].File = w.CopyPath(c.TimeoutPoints[i].File)
	}
	c.ObservePoints = append([]catalog.ObservePoint(nil), cat.ObservePoints...)
	for i := range c.ObservePoints {
		c.ObservePoints[i].File = w.CopyPath(c.ObservePoints[i].File)
	}
	localizeStates(&c, w)
	localizeRole(&c, w)
	return &c
}
